//! Erosion's wear and deposits: two fields of the document that every erosion adds to (a region
//! run: the editor's, a journal's erode step; and each instance of an erosion stroke), as part
//! of the same undo step as the heights: per texel, the metres of ground the runs removed and
//! the metres they laid down. Saved with the project and exported as maps (docs/maps.md, "Wear
//! and deposits").

use crate::pages::geometry::Rect;

/// Name of the wear field: metres removed by erosion, summed over runs (0: never worn).
pub const WEAR_FIELD: &str = "wear";
/// Name of the deposits field: metres laid down by erosion, summed over runs.
pub const DEPOSITS_FIELD: &str = "deposits";

/// The metres one texel lost and gained going from height `before` to `after`:
/// `d = (after − before)·height_unit` (metres per height unit) in f32, then `(max(0, −d),
/// max(0, d))`. The erosion brush's blend kernel (`erosion/blend_out.comp`) does the same
/// arithmetic on the GPU.
pub fn change(before: f32, after: f32, height_unit: f32) -> (f32, f32) {
    let d = (after - before) * height_unit;
    ((-d).max(0.0), d.max(0.0))
}

/// Per texel, the metres one run removed and laid down ([`change`]).
pub fn changes(before: &[f32], after: &[f32], height_unit: f64) -> (Vec<f32>, Vec<f32>) {
    let unit = height_unit as f32;
    before
        .iter()
        .zip(after)
        .map(|(&b, &a)| change(b, a, unit))
        .unzip()
}

/// Adds the change from `before` to `after` (row-major over `rect`) to `sums`, the wear and
/// deposits over `union` (row-major; `rect` inside it), texel by texel ([`change`], added to
/// the running sums: the blend kernel's arithmetic and order).
pub fn add_changes(
    [wear, deposits]: &mut [Vec<f32>; 2],
    union: Rect,
    rect: Rect,
    before: &[f32],
    after: &[f32],
    unit: f32,
) {
    let (w, rw) = (union.width() as usize, rect.width() as usize);
    let rows = before.chunks(rw).zip(after.chunks(rw));
    for (y, (b_row, a_row)) in rows.enumerate() {
        let from = ((rect.y0 - union.y0) as usize + y) * w + (rect.x0 - union.x0) as usize;
        let sums = wear[from..from + rw]
            .iter_mut()
            .zip(&mut deposits[from..from + rw]);
        for ((worn, laid), (&b, &a)) in sums.zip(b_row.iter().zip(a_row)) {
            let (dw, dd) = change(b, a, unit);
            *worn += dw;
            *laid += dd;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lowered_texel_is_worn_and_a_raised_one_holds_a_deposit_in_metres() {
        let (wear, deposits) = changes(&[1.0, 1.0, 1.0], &[0.75, 1.0, 1.5], 100.0);
        assert_eq!(wear, vec![25.0, 0.0, 0.0]);
        assert_eq!(deposits, vec![0.0, 0.0, 50.0]);
    }

    #[test]
    fn changes_add_at_their_place_in_the_union() {
        // A 2x1 rectangle at (1, 1) of a 3x2 union.
        let mut sums = [vec![1.0; 6], vec![0.0; 6]];
        let (union, rect) = (Rect::new(0, 0, 3, 2), Rect::new(1, 1, 3, 2));
        add_changes(&mut sums, union, rect, &[1.0, 1.0], &[0.5, 2.0], 10.0);
        assert_eq!(sums[0], vec![1.0, 1.0, 1.0, 1.0, 6.0, 1.0]);
        assert_eq!(sums[1], vec![0.0, 0.0, 0.0, 0.0, 0.0, 10.0]);
    }
}

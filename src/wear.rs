//! Erosion's wear and deposits: two fields of the document that every region erosion (the
//! Erode step: the editor's region run, a journal's erode step) adds to, as part
//! of the same undo step as the heights: per texel, the metres of ground the runs removed and
//! the metres they laid down. Saved with the project and exported as maps (docs/maps.md, "Wear
//! and deposits").

/// Name of the wear field: metres removed by erosion, summed over runs (0: never worn).
pub const WEAR_FIELD: &str = "wear";
/// Name of the deposits field: metres laid down by erosion, summed over runs.
pub const DEPOSITS_FIELD: &str = "deposits";

/// Per texel, the metres one run removed and laid down: `max(0, before − after)` and
/// `max(0, after − before)`, heights times `height_unit` (metres per height unit).
pub fn changes(before: &[f32], after: &[f32], height_unit: f64) -> (Vec<f32>, Vec<f32>) {
    before
        .iter()
        .zip(after)
        .map(|(&b, &a)| {
            let d = (f64::from(a) - f64::from(b)) * height_unit;
            ((-d).max(0.0) as f32, d.max(0.0) as f32)
        })
        .unzip()
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
}

//! The flow maps (docs/maps.md): D8 drainage area as geology routes it, topographic wetness
//! ln(a / tan β), and the shades their overlays draw (0..1, log-scaled). The drainage here is
//! the CPU's; [`super::drainage`] counts it on the GPU.

use crate::pages::DocumentDesc;

/// D8 drainage area (m²) of every texel of `heights` (height units of document `desc`, `size`
/// texels), as geology routes it (`geology::cpu::d8_area`): from the texel itself, τ² at a
/// ridge; pits are not filled.
/// The GPU's counts ([`super::drainage`]) times the push's texel area are the same areas, bit
/// for bit.
pub fn drainage(heights: &[f32], size: [u32; 2], desc: &DocumentDesc) -> Vec<f64> {
    let tau = desc.texel_size() as f32;
    let push = super::drainage::push(size, tau);
    crate::geology::cpu::d8_area(&metres(heights, desc), &push)
}

/// `heights` (height units of `desc`) in metres, as the drainage routes them.
pub fn metres(heights: &[f32], desc: &DocumentDesc) -> Vec<f32> {
    heights.iter().map(|&h| desc.metres(h) as f32).collect()
}

/// Topographic wetness ln(a / tan β) of drainage `area` (m²) and `slope` (degrees) on texels of
/// `tau` metres: a = area / τ, the area per metre of contour; tan β at least 0.001.
pub fn wetness(area: &[f64], slope: impl Iterator<Item = f32>, tau: f64) -> Vec<f32> {
    area.iter()
        .zip(slope)
        .map(|(a, deg)| {
            let tan = f64::from(deg).to_radians().tan().max(1e-3);
            (a / tau / tan).ln() as f32
        })
        .collect()
}

/// The drainage overlay's values of drainage areas `area` (m²) on texels of area `a0`: each
/// [`drainage_shade`] against the largest.
pub fn drainage_shades(area: &[f32], a0: f32) -> Vec<f32> {
    let most = area.iter().copied().fold(a0, f32::max);
    area.iter().map(|&a| drainage_shade(a, a0, most)).collect()
}

/// The drainage overlay's value of drainage area `a` (m²) on texels of area `a0` whose largest
/// area is `most`: 0 below a hundred texels, then log-scaled to 1 at `most`.
pub fn drainage_shade(a: f32, a0: f32, most: f32) -> f32 {
    let lo = (100.0 * a0).ln();
    let hi = most.ln().max(lo + 1.0);
    ((a.ln() - lo) / (hi - lo)).clamp(0.0, 1.0)
}

/// The wetness overlay's values of `wetness`: 0 at its median (half the ground drier), 1 at its
/// largest.
pub fn wetness_shades(wetness: &[f32]) -> Vec<f32> {
    if wetness.is_empty() {
        return Vec::new();
    }
    // The median and the largest by selection, not a sort (a large document's texels).
    let mut values = wetness.to_vec();
    let half = values.len() / 2;
    let (_, &mut median, above) = values.select_nth_unstable_by(half, f32::total_cmp);
    let most = above
        .iter()
        .copied()
        .fold(median, |m, v| match v.total_cmp(&m) {
            std::cmp::Ordering::Greater => v,
            _ => m,
        });
    let span = (most - median).max(1e-6);
    wetness
        .iter()
        .map(|&w| ((w - median) / span).clamp(0.0, 1.0))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_drainage_shade_is_0_on_hillslopes_and_1_at_the_largest_river() {
        assert_eq!(drainage_shade(1.0, 1.0, 1e6), 0.0);
        assert_eq!(drainage_shade(50.0, 1.0, 1e6), 0.0);
        assert!((drainage_shade(1e6, 1.0, 1e6) - 1.0).abs() < 1e-6);
        let mid = drainage_shade(1e4, 1.0, 1e6);
        assert!((mid - 0.5).abs() < 1e-5, "{mid}");
    }

    #[test]
    fn wetness_shades_run_from_the_median_to_the_wettest() {
        let w = [1.0, 2.0, 3.0, 4.0, 9.0];
        assert_eq!(wetness_shades(&w), vec![0.0, 0.0, 0.0, 1.0 / 6.0, 1.0]);
        // On a plane of 10° every texel's a is its own τ²/τ: ln(τ / tan 10°).
        let area = vec![4.0; 3];
        let got = wetness(&area, [10.0f32; 3].into_iter(), 2.0);
        let want = (2.0 / 10f64.to_radians().tan()).ln() as f32;
        assert!(got.iter().all(|&g| (g - want).abs() < 1e-6), "{got:?}");
    }
}

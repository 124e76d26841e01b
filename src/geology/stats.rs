//! Drainage statistics that say whether a landscape is drained (docs/bench.md, "Geology"):
//! Hack's exponent, the fraction of pits and the percentiles of the steepest-descent slope, all
//! from D8 routing as the model routes (a texel drains to its receiver).

use super::cpu::{d8_area, receivers, NO_RECEIVER, OFFSETS};
use serde::{Deserialize, Serialize};

/// The statistics of one height grid.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Drainage {
    /// h of Hack's law L ∝ A^h: the least-squares slope of ln L against ln A over the texels
    /// draining at least [`HACK_MIN_TEXELS`] texels, L the longest flow path upstream (m) and A
    /// the D8 drainage area (m²). Real basins: 0.5 to 0.6.
    pub hack_exponent: f64,
    /// Interior texels (not on the border) without a lower neighbour, over all interior texels.
    pub pit_fraction: f64,
    /// Steepest-descent slope (to the receiver; 0 for a pit) of the interior texels, degrees:
    /// the 50th, 90th and 99th percentiles.
    pub slope_p50_deg: f64,
    pub slope_p90_deg: f64,
    pub slope_p99_deg: f64,
}

/// Texels of drainage area a texel needs to count in Hack's fit (a channel, not a hillslope).
pub const HACK_MIN_TEXELS: f64 = 100.0;

/// The statistics of heights `z` (m, `size` row-major) on `tau`-metre texels.
pub fn drainage(z: &[f32], size: [u32; 2], tau: f32) -> Drainage {
    // Routing needs the grid and the distances only: any parameters' constants do.
    let push = super::GeologyParams::default().push(size, tau, None);
    let r = receivers(z, &push);
    let area = d8_area(z, &push);
    let (w, h) = (size[0] as i32, size[1] as i32);
    let downstream = |i: usize| -> Option<(usize, f64)> {
        let k = r[i];
        (k != NO_RECEIVER).then(|| {
            let [dx, dy] = OFFSETS[k as usize];
            let (x, y) = (i as i32 % w, i as i32 / w);
            let d = f64::from(tau) * f64::from(dx * dx + dy * dy).sqrt();
            (((y + dy) * w + x + dx) as usize, d)
        })
    };
    // Longest path upstream, from the highest texel down.
    let mut order: Vec<usize> = (0..z.len()).collect();
    order.sort_by(|&i, &j| z[j].total_cmp(&z[i]));
    let mut length = vec![0.0f64; z.len()];
    for &i in &order {
        if let Some((j, d)) = downstream(i) {
            length[j] = length[j].max(length[i] + d);
        }
    }
    let a_min = HACK_MIN_TEXELS * f64::from(tau) * f64::from(tau);
    let pts: Vec<(f64, f64)> = (0..z.len())
        .filter(|&i| area[i] >= a_min && length[i] > 0.0)
        .map(|i| (area[i].ln(), length[i].ln()))
        .collect();
    let interior: Vec<usize> = (0..z.len())
        .filter(|&i| {
            let (x, y) = (i as i32 % w, i as i32 / w);
            x > 0 && y > 0 && x < w - 1 && y < h - 1
        })
        .collect();
    let pits = interior.iter().filter(|&&i| r[i] == NO_RECEIVER).count();
    let mut slopes: Vec<f64> = interior
        .iter()
        .map(|&i| {
            downstream(i).map_or(0.0, |(j, d)| {
                (f64::from(z[i] - z[j]) / d).atan().to_degrees()
            })
        })
        .collect();
    slopes.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        slopes
            .get(((slopes.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    Drainage {
        hack_exponent: least_squares_slope(&pts),
        pit_fraction: pits as f64 / interior.len().max(1) as f64,
        slope_p50_deg: pct(0.5),
        slope_p90_deg: pct(0.9),
        slope_p99_deg: pct(0.99),
    }
}

/// The slope of the least-squares line through `pts` (NaN for fewer than two distinct x).
pub fn least_squares_slope(pts: &[(f64, f64)]) -> f64 {
    let n = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    sxy / sxx
}

impl std::fmt::Display for Drainage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Hack's exponent {:.3}, pits {:.3} %, slope p50/p90/p99 {:.1}/{:.1}/{:.1}°",
            self.hack_exponent,
            100.0 * self.pit_fraction,
            self.slope_p50_deg,
            self.slope_p90_deg,
            self.slope_p99_deg
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tilted plane drains straight down its slope: no pits, every texel at the plane's
    /// angle, and each column a stream whose length grows as its area does (L = A/τ − τ: h ≈ 1); a bowl
    /// has one pit.
    #[test]
    fn a_tilted_plane_has_its_angle_and_no_pits_and_a_bowl_is_one_pit() {
        let (w, h) = (40u32, 30u32);
        let tau = 10.0;
        let plane: Vec<f32> = (0..w * h).map(|i| 2.0 * (i / w) as f32).collect();
        let d = drainage(&plane, [w, h], tau);
        assert_eq!(d.pit_fraction, 0.0);
        let angle = (2.0f64 / 10.0).atan().to_degrees();
        assert!((d.slope_p50_deg - angle).abs() < 1e-4, "{d}");
        assert!((d.slope_p99_deg - angle).abs() < 1e-4, "{d}");
        let bowl: Vec<f32> = (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as f32 - 20.0, (i / w) as f32 - 15.0);
                x * x + y * y
            })
            .collect();
        let d = drainage(&bowl, [w, h], tau);
        let interior = f64::from((w - 2) * (h - 2));
        assert!((d.pit_fraction - 1.0 / interior).abs() < 1e-12, "{d}");
        // Down a long plane every column is a stream of its own: L = A / τ, so h = 1.
        let (w, h) = (12u32, 400u32);
        let long: Vec<f32> = (0..w * h).map(|i| (i / w) as f32).collect();
        let d = drainage(&long, [w, h], tau);
        assert!((d.hack_exponent - 1.0).abs() < 0.01, "{d}");
    }
}

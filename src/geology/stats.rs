//! Drainage statistics that say whether a landscape is drained (docs/bench.md, "Geology"):
//! Hack's exponent, the fraction of pits and the percentiles of the steepest-descent slope, all
//! from D8 routing as the model routes (a texel drains to its receiver).

use super::cpu::{d8_area, receivers, NO_RECEIVER, OFFSETS};
use serde::{Deserialize, Serialize};

/// The statistics of one height grid.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Drainage {
    /// h of Hack's law L ∝ A^h: the least-squares slope of ln L against ln A over the channels
    /// (texels draining at least [`hack_min_area`]), L the longest flow path upstream (m) and A
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

/// Texels of drainage area a texel needs to count in Hack's fit: below this the fit sees the
/// grid (on a USGS DEM of 84 m texels, 2 texels gave 0.69, and 15 to 140 texels 0.49 to 0.50).
pub const HACK_MIN_TEXELS: f64 = 100.0;
/// Square metres of drainage area a texel needs to count in Hack's fit: below this the fit
/// sees hillslopes, not channels (channel heads drain 10³ to 10⁵ m²). On 1 m texels 100
/// texels is a 10 m patch of hillslope.
pub const HACK_MIN_AREA_M2: f64 = 1e4;

/// The drainage area (m²) a texel of `tau` metres needs to count in Hack's fit: at least
/// [`HACK_MIN_TEXELS`] texels and [`HACK_MIN_AREA_M2`], so the fit sees channels at every
/// texel size.
pub fn hack_min_area(tau: f32) -> f64 {
    (HACK_MIN_TEXELS * f64::from(tau) * f64::from(tau)).max(HACK_MIN_AREA_M2)
}

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
    let a_min = hack_min_area(tau);
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

/// How well the channels of two runs over the same ground at two resolutions coincide (issue
/// 38's resolution consistency): channels are texels draining at least `fraction` of the region.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelAgreement {
    /// Channels drain at least this fraction of the region's area.
    pub fraction: f64,
    /// The tolerance, in texels of the coarse run.
    pub within_coarse_texels: f64,
    /// The fine run's channel texels within the tolerance of a coarse channel, over all of them
    /// (fine texels: proportional to channel length).
    pub fine_on_coarse: f64,
    /// The coarse run's channel texels within the tolerance of a fine channel, over all of them.
    pub coarse_on_fine: f64,
}

/// The agreement of the channels of drainage areas `coarse` (`coarse_side`²) and `fine`
/// (`fine_side`², a multiple of it) over the same square region, areas in m²: channel texels
/// drain at least `fraction` of the region (`region_m2`); a fine texel lies in the coarse texel
/// that covers it, and a coarse texel is a fine channel's where any fine texel in it is; "within"
/// is a Euclidean distance of at most `radius` coarse texels.
pub fn channel_agreement(
    coarse: &[f64],
    coarse_side: usize,
    fine: &[f64],
    fine_side: usize,
    region_m2: f64,
    fraction: f64,
    radius: f64,
) -> ChannelAgreement {
    let f = fine_side / coarse_side;
    assert_eq!(
        f * coarse_side,
        fine_side,
        "the fine side is a multiple of the coarse"
    );
    let least = fraction * region_m2;
    let coarse_channel: Vec<bool> = coarse.iter().map(|&a| a >= least).collect();
    let mut fine_on_coarse_grid = vec![false; coarse_side * coarse_side];
    let fine_texels: Vec<usize> = (0..fine.len())
        .filter(|&i| fine[i] >= least)
        .map(|i| (i / fine_side / f) * coarse_side + (i % fine_side) / f)
        .collect();
    for &c in &fine_texels {
        fine_on_coarse_grid[c] = true;
    }
    let near_coarse = dilate(&coarse_channel, coarse_side, radius);
    let near_fine = dilate(&fine_on_coarse_grid, coarse_side, radius);
    let share = |hits: usize, all: usize| {
        if all == 0 {
            0.0
        } else {
            hits as f64 / all as f64
        }
    };
    let coarse_texels: Vec<usize> = (0..coarse.len()).filter(|&i| coarse_channel[i]).collect();
    ChannelAgreement {
        fraction,
        within_coarse_texels: radius,
        fine_on_coarse: share(
            fine_texels.iter().filter(|&&c| near_coarse[c]).count(),
            fine_texels.len(),
        ),
        coarse_on_fine: share(
            coarse_texels.iter().filter(|&&c| near_fine[c]).count(),
            coarse_texels.len(),
        ),
    }
}

/// `mask` (`side`²) grown by a disc of `radius` texels.
fn dilate(mask: &[bool], side: usize, radius: f64) -> Vec<bool> {
    let r = radius.floor() as i64;
    let disc: Vec<(i64, i64)> = (-r..=r)
        .flat_map(|dy| (-r..=r).map(move |dx| (dx, dy)))
        .filter(|&(dx, dy)| ((dx * dx + dy * dy) as f64) <= radius * radius)
        .collect();
    let n = side as i64;
    let mut out = vec![false; mask.len()];
    for (i, _) in mask.iter().enumerate().filter(|(_, &m)| m) {
        let (x, y) = (i as i64 % n, i as i64 / n);
        for &(dx, dy) in &disc {
            let (u, v) = (x + dx, y + dy);
            if (0..n).contains(&u) && (0..n).contains(&v) {
                out[(v * n + u) as usize] = true;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channels_agree_within_the_tolerance_and_not_past_it() {
        // A 16² coarse grid and a 64² fine one over 64 m: one straight channel down column 5
        // (coarse), and the fine one at coarse column 5 + `shift`.
        let (cs, fs) = (16usize, 64usize);
        let region = 64.0 * 64.0;
        let coarse: Vec<f64> = (0..cs * cs)
            .map(|i| if i % cs == 5 { 1000.0 } else { 1.0 })
            .collect();
        let fine_at = |shift: usize| -> Vec<f64> {
            (0..fs * fs)
                .map(|i| {
                    if (i % fs) / 4 == 5 + shift {
                        1000.0
                    } else {
                        1.0
                    }
                })
                .collect()
        };
        let agree = |shift| channel_agreement(&coarse, cs, &fine_at(shift), fs, region, 0.1, 4.0);
        let same = agree(0);
        assert_eq!((same.fine_on_coarse, same.coarse_on_fine), (1.0, 1.0));
        let near = agree(4);
        assert_eq!((near.fine_on_coarse, near.coarse_on_fine), (1.0, 1.0));
        let far = agree(5);
        assert_eq!((far.fine_on_coarse, far.coarse_on_fine), (0.0, 0.0));
        // Below the threshold nothing is a channel: no agreement to claim.
        let none = channel_agreement(&coarse, cs, &fine_at(0), fs, region, 0.5, 4.0);
        assert_eq!(none.fine_on_coarse, 0.0);
    }

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
        // On 1 m texels the same plane's columns drain 400 m² at most: hillslope, not channel.
        let d = drainage(&long, [w, h], 1.0);
        assert!(d.hack_exponent.is_nan(), "{d}");
    }

    /// Hack's fit takes channels of 100 texels and 1 ha at least, whatever the texel size.
    #[test]
    fn hacks_fit_takes_channels_of_a_hectare_and_a_hundred_texels() {
        assert_eq!(hack_min_area(1.0), 1e4);
        assert_eq!(hack_min_area(4.0), 1e4);
        assert_eq!(hack_min_area(10.0), 1e4);
        assert_eq!(hack_min_area(90.0), 810_000.0);
    }
}

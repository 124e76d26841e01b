//! A region's material weights on the CPU: the twin of `shaders-glsl/maps/weights.comp`, the
//! same inputs from the same neighbours in the same order.

use super::materials::weights;
use super::MapsPush;
use rayon::prelude::*;

/// The weights (5 per texel, [`super::materials::NAMES`] order, row-major) of the region of
/// heights `h` (height units, `p.size` row-major).
pub fn weights_region(h: &[f32], p: &MapsPush) -> Vec<f32> {
    maps_region(h, p).weights
}

/// The weights and the surface maps (slope and curvatures) of the region of heights `h`.
pub fn maps_region(h: &[f32], p: &MapsPush) -> super::Maps {
    const N: usize = super::Surface::COUNT;
    let [w, ht] = p.size;
    let at = |x: i32, y: i32| h[(y.clamp(0, ht - 1) * w + x.clamp(0, w - 1)) as usize];
    let scale = [p.unit / p.tau[0], p.unit / p.tau[1]];
    let mean_tau = (p.tau[0] * p.tau[1]).sqrt();
    let mut out = vec![0.0f32; (w * ht) as usize * 5];
    let mut fields = vec![0.0f32; (w * ht) as usize * N];
    out.par_chunks_mut(w as usize * 5)
        .zip(fields.par_chunks_mut(w as usize * N))
        .enumerate()
        .for_each(|(y, (row, frow))| {
            let y = y as i32;
            for x in 0..w {
                let c = at(x, y);
                let (e, wv, s, n) = (at(x + 1, y), at(x - 1, y), at(x, y + 1), at(x, y - 1));
                let gx = (e - wv) * 0.5 * scale[0];
                let gy = (s - n) * 0.5 * scale[1];
                let deg = (gx * gx + gy * gy).sqrt().atan().to_degrees();
                let curv_m = ((e + wv - 2.0 * c) / (p.tau[0] * p.tau[0])
                    + (s + n - 2.0 * c) / (p.tau[1] * p.tau[1]))
                    * p.unit;
                let curv = curv_m * mean_tau;
                let alt = ((c - p.lo) / (p.hi - p.lo).max(1e-3)).clamp(0.0, 1.0);
                let xz = [(x + p.origin[0]) as f32, (y + p.origin[1]) as f32];
                let m = weights(deg, alt, curv, xz, p.rules0, p.rules1);
                row[x as usize * 5..x as usize * 5 + 5].copy_from_slice(&m);
                let corners = [
                    at(x + 1, y + 1),
                    at(x - 1, y + 1),
                    at(x + 1, y - 1),
                    at(x - 1, y - 1),
                ];
                let (profile, plan) = profile_plan([c, e, wv, s, n], corners, p);
                frow[x as usize * N..x as usize * N + N]
                    .copy_from_slice(&[deg, curv_m, profile, plan]);
            }
        });
    super::Maps {
        weights: out,
        surface: fields,
    }
}

/// The profile and the plan curvature (1/m, concave above 0) at a texel whose heights are
/// `[c, e, w, s, n]` (itself, east, west, south, north; height units) and the corners
/// `[se, sw, ne, nw]`: Zevenbergen & Thorne's (1987) from the derivatives of z in metres by
/// central differences (p, q first along x and y; r, t second; s mixed),
/// profile `(p²r + 2pqs + q²t) / ((p² + q²)(1 + p² + q²)^1.5)` and plan
/// `(q²r − 2pqs + p²t) / (p² + q²)^1.5`; 0 where the ground is level (p² + q² < 1e-12).
/// The twin of `weights.comp`'s `profilePlan`.
pub fn profile_plan(
    [c, e, w, s, n]: [f32; 5],
    [se, sw, ne, nw]: [f32; 4],
    m: &MapsPush,
) -> (f32, f32) {
    let (tx, ty, u) = (m.tau[0], m.tau[1], m.unit);
    let p = (e - w) * u / (2.0 * tx);
    let q = (s - n) * u / (2.0 * ty);
    let r = (e + w - 2.0 * c) * u / (tx * tx);
    let t = (s + n - 2.0 * c) * u / (ty * ty);
    let sm = (se - sw - ne + nw) * u / (4.0 * tx * ty);
    let g2 = p * p + q * q;
    if g2 < 1e-12 {
        return (0.0, 0.0);
    }
    let profile = (p * p * r + 2.0 * p * q * sm + q * q * t) / (g2 * (1.0 + g2).powf(1.5));
    let plan = (q * q * r - 2.0 * p * q * sm + p * p * t) / g2.powf(1.5);
    (profile, plan)
}

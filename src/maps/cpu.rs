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

/// The weights and the slope and curvature maps of the region of heights `h`.
pub fn maps_region(h: &[f32], p: &MapsPush) -> super::Maps {
    let [w, ht] = p.size;
    let at = |x: i32, y: i32| h[(y.clamp(0, ht - 1) * w + x.clamp(0, w - 1)) as usize];
    let scale = [p.unit / p.tau[0], p.unit / p.tau[1]];
    let mean_tau = (p.tau[0] * p.tau[1]).sqrt();
    let mut out = vec![0.0f32; (w * ht) as usize * 5];
    let mut fields = vec![0.0f32; (w * ht) as usize * 2];
    out.par_chunks_mut(w as usize * 5)
        .zip(fields.par_chunks_mut(w as usize * 2))
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
                frow[x as usize * 2] = deg;
                frow[x as usize * 2 + 1] = curv_m;
            }
        });
    super::Maps {
        weights: out,
        slope_curvature: fields,
    }
}

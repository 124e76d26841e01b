//! CPU twins of every function in `shaders-glsl/include/noise.glsl`, line for line, in f32. They
//! are the reference the GPU is tested against and the baseline it is benchmarked against.
//! The tables are decoded once ([`CpuTables`]) from the same [`NoiseTables`] the GPU uploads.

use super::tables::{decode_component, NoiseTables, TABLE_SIZE};
use super::NoiseKind;
use crate::noise::shared::NoiseParams;
use rayon::prelude::*;

/// Seeds of the pre-warp fields, as `PREWARP_SEED_X/Y` in noise.glsl.
pub const PREWARP_SEED_X: i32 = 101;
pub const PREWARP_SEED_Y: i32 = 211;

type Vec2 = [f32; 2];
type Vec3 = [f32; 3];

/// The tables in the form the CPU reads fastest: perm as bytes, grad texels pre-decoded.
pub struct CpuTables {
    perm: Vec<[u8; 4]>,
    grad: Vec<[f32; 4]>,
}

impl CpuTables {
    pub fn new(tables: &NoiseTables) -> Self {
        Self {
            perm: tables.perm.clone(),
            grad: tables
                .grad
                .iter()
                .map(|t| t.map(decode_component))
                .collect(),
        }
    }

    /// g1, g2 of lattice cell `i` (= floor(p)), as `cellGradients` in GLSL.
    #[inline(always)]
    fn cell_gradients(&self, i: Vec2, seed: i32) -> ([f32; 4], [f32; 4]) {
        let cx = (i[0] - 256.0 * (i[0] * (1.0 / 256.0)).floor()) as usize;
        let cy = (i[1] - 256.0 * (i[1] * (1.0 / 256.0)).floor()) as usize;
        let [r, g, b, a] = self.perm[cy * TABLE_SIZE + cx].map(|c| i32::from(c) + seed);
        let at = |row: i32, col: i32| {
            self.grad[((row & 255) as usize) * TABLE_SIZE + (col & 255) as usize]
        };
        (at(g, r), at(a, b))
    }
}

#[inline(always)]
fn fade(f: f32) -> f32 {
    f * f * f * (f * (f * 6.0 - 15.0) + 10.0)
}

#[inline(always)]
fn fade_deriv(f: f32) -> f32 {
    f * f * (f * (f * 30.0 - 60.0) + 30.0)
}

#[inline(always)]
fn dot(a: Vec2, b: Vec2) -> f32 {
    a[0] * b[0] + a[1] * b[1]
}

/// (a, b - a, c - a, a - b - c + d) of the four corner planes at f.
#[inline(always)]
fn blend_coefficients(g1: [f32; 4], g2: [f32; 4], f: Vec2) -> [f32; 4] {
    let a = dot([g1[0], g1[1]], f);
    let b = dot([g2[0], g2[1]], [f[0] - 1.0, f[1]]);
    let c = dot([g1[2], g1[3]], [f[0], f[1] - 1.0]);
    let d = dot([g2[2], g2[3]], [f[0] - 1.0, f[1] - 1.0]);
    [a, b - a, c - a, a - b - c + d]
}

#[inline(always)]
fn split(p: Vec2) -> (Vec2, Vec2) {
    let i = [p[0].floor(), p[1].floor()];
    (i, [p[0] - i[0], p[1] - i[1]])
}

#[inline(always)]
fn scale2(p: Vec2, s: f32) -> Vec2 {
    [p[0] * s, p[1] * s]
}

impl CpuTables {
    /// `perlinNoise`.
    pub fn perlin(&self, p: Vec2, seed: i32) -> f32 {
        let (i, f) = split(p);
        let (g1, g2) = self.cell_gradients(i, seed);
        let w = [fade(f[0]), fade(f[1])];
        let k = blend_coefficients(g1, g2, f);
        (k[0] + k[1] * w[0] + k[2] * w[1] + k[3] * w[0] * w[1]) * 1.5
    }

    /// `perlinNoisePseudoDeriv`.
    pub fn perlin_pseudo_deriv(&self, p: Vec2, seed: i32) -> Vec3 {
        let (i, f) = split(p);
        let (g1, g2) = self.cell_gradients(i, seed);
        let w = [fade(f[0]), fade(f[1])];
        let dw = [fade_deriv(f[0]), fade_deriv(f[1])];
        let k = blend_coefficients(g1, g2, f);
        let n = k[0] + k[1] * w[0] + k[2] * w[1] + k[3] * w[0] * w[1];
        [
            n * 1.5,
            dw[0] * (k[1] + k[3] * w[1]) * 1.5,
            dw[1] * (k[2] + k[3] * w[0]) * 1.5,
        ]
    }

    /// `perlinNoiseDeriv`: value and exact analytic gradient.
    pub fn perlin_deriv(&self, p: Vec2, seed: i32) -> Vec3 {
        let (i, f) = split(p);
        let (g1, g2) = self.cell_gradients(i, seed);
        let w = [fade(f[0]), fade(f[1])];
        let dw = [fade_deriv(f[0]), fade_deriv(f[1])];
        let k = blend_coefficients(g1, g2, f);
        let n = k[0] + k[1] * w[0] + k[2] * w[1] + k[3] * w[0] * w[1];
        let kx = [
            g1[0],
            g2[0] - g1[0],
            g1[2] - g1[0],
            g1[0] - g2[0] - g1[2] + g2[2],
        ];
        let ky = [
            g1[1],
            g2[1] - g1[1],
            g1[3] - g1[1],
            g1[1] - g2[1] - g1[3] + g2[3],
        ];
        let dx = kx[0]
            + kx[1] * w[0]
            + kx[2] * w[1]
            + kx[3] * w[0] * w[1]
            + dw[0] * (k[1] + k[3] * w[1]);
        let dy = ky[0]
            + ky[1] * w[0]
            + ky[2] * w[1]
            + ky[3] * w[0] * w[1]
            + dw[1] * (k[2] + k[3] * w[0]);
        [n * 1.5, dx * 1.5, dy * 1.5]
    }

    /// Sum of `octaves` bands of `band(perlin)`, as fbm/billowy/ridged in GLSL.
    #[inline(always)]
    fn sum_bands(
        &self,
        p: Vec2,
        seed: i32,
        octaves: i32,
        lacunarity: f32,
        gain: f32,
        band: impl Fn(f32) -> f32,
    ) -> f32 {
        let (mut sum, mut freq, mut amp) = (0.0f32, 1.0f32, 1.0f32);
        for i in 0..octaves {
            sum += amp * band(self.perlin(scale2(p, freq), seed + i));
            freq *= lacunarity;
            amp *= gain;
        }
        sum
    }

    pub fn fbm(&self, p: Vec2, seed: i32, octaves: i32, lacunarity: f32, gain: f32) -> f32 {
        self.sum_bands(p, seed, octaves, lacunarity, gain, |n| n)
    }

    pub fn billowy(&self, p: Vec2, seed: i32, octaves: i32, lacunarity: f32, gain: f32) -> f32 {
        self.sum_bands(p, seed, octaves, lacunarity, gain, f32::abs)
    }

    pub fn ridged(&self, p: Vec2, seed: i32, octaves: i32, lacunarity: f32, gain: f32) -> f32 {
        self.sum_bands(p, seed, octaves, lacunarity, gain, |n| 1.0 - n.abs())
    }

    pub fn iq(&self, p: Vec2, seed: i32, octaves: i32, lacunarity: f32, gain: f32) -> f32 {
        let (mut sum, mut freq, mut amp) = (0.5f32, 1.0f32, 1.0f32);
        let mut dsum = [0.0f32; 2];
        for i in 0..octaves {
            let n = self.perlin_pseudo_deriv(scale2(p, freq), seed + i);
            dsum = [dsum[0] + n[1], dsum[1] + n[2]];
            sum += amp * n[0] / (1.0 + dot(dsum, dsum));
            freq *= lacunarity;
            amp *= gain;
        }
        sum
    }

    pub fn swiss(
        &self,
        p: Vec2,
        seed: i32,
        octaves: i32,
        lacunarity: f32,
        gain: f32,
        warp: f32,
    ) -> f32 {
        let (mut sum, mut freq, mut amp) = (0.0f32, 1.0f32, 1.0f32);
        let mut dsum = [0.0f32; 2];
        for i in 0..octaves {
            let q = [
                (p[0] + warp * dsum[0]) * freq,
                (p[1] + warp * dsum[1]) * freq,
            ];
            let n = self.perlin_deriv(q, seed + i);
            sum += amp * (1.0 - n[0].abs());
            dsum = [dsum[0] + amp * n[1] * -n[0], dsum[1] + amp * n[2] * -n[0]];
            freq *= lacunarity;
            amp *= gain * sum.clamp(0.0, 1.0);
        }
        sum
    }

    #[allow(clippy::too_many_arguments)]
    pub fn jordan(
        &self,
        p: Vec2,
        seed: i32,
        octaves: i32,
        lacunarity: f32,
        gain1: f32,
        gain: f32,
        warp0: f32,
        warp: f32,
        damp0: f32,
        damp: f32,
        damp_scale: f32,
    ) -> f32 {
        let n = self.perlin_deriv(p, seed);
        let n2 = n.map(|c| c * n[0]);
        let mut sum = n2[0];
        let mut dsum_warp = [warp0 * n2[1], warp0 * n2[2]];
        let mut dsum_damp = [damp0 * n2[1], damp0 * n2[2]];
        let mut amp = gain1;
        let mut freq = lacunarity;
        let mut damped_amp = amp * gain;
        for i in 1..octaves {
            let q = [p[0] * freq + dsum_warp[0], p[1] * freq + dsum_warp[1]];
            let n = self.perlin_deriv(q, seed + i);
            let n2 = n.map(|c| c * n[0]);
            sum += damped_amp * n2[0];
            dsum_warp = [dsum_warp[0] + warp * n2[1], dsum_warp[1] + warp * n2[2]];
            dsum_damp = [dsum_damp[0] + damp * n2[1], dsum_damp[1] + damp * n2[2]];
            freq *= lacunarity;
            amp *= gain;
            damped_amp = amp * (1.0 - damp_scale / (1.0 + dot(dsum_damp, dsum_damp)));
        }
        sum
    }

    #[allow(clippy::too_many_arguments)]
    pub fn erosive(
        &self,
        p: Vec2,
        seed: i32,
        octaves: i32,
        lacunarity: f32,
        gain: f32,
        alpha: f32,
        beta: f32,
    ) -> f32 {
        let (mut freq, mut amp, mut sum, mut s) = (1.0f32, 1.0f32, 0.0f32, 1.0f32);
        let mut d = [0.0f32; 2];
        for j in 0..octaves {
            let n = self.perlin_deriv([freq * (p[0] + d[0]), freq * (p[1] + d[1])], seed + j);
            sum += amp * s * (1.0 - n[0].abs());
            d = [
                d[0] + amp * alpha * s * (-n[0] * n[1]),
                d[1] + amp * alpha * s * (-n[0] * n[2]),
            ];
            s *= (beta * sum).clamp(0.0, 1.0);
            amp *= gain;
            freq *= lacunarity;
        }
        sum
    }

    /// `prewarp`: eq. 8 with fBm of `prewarp_octaves`.
    pub fn prewarp(&self, params: &NoiseParams, p: Vec2) -> Vec2 {
        if params.prewarp_amount == 0.0 || params.prewarp_octaves <= 0 {
            return p;
        }
        let q = scale2(p, params.prewarp_scale);
        let fx = self.fbm(
            q,
            params.seed + PREWARP_SEED_X,
            params.prewarp_octaves,
            params.lacunarity,
            params.gain,
        );
        let fy = self.fbm(
            q,
            params.seed + PREWARP_SEED_Y,
            params.prewarp_octaves,
            params.lacunarity,
            params.gain,
        );
        [
            p[0] + params.prewarp_amount * fx,
            p[1] + params.prewarp_amount * fy,
        ]
    }

    /// `noiseAt`: B(p) of `kind`, pre-warp and T_post included.
    pub fn noise_at(&self, kind: NoiseKind, params: &NoiseParams, p: Vec2) -> f32 {
        let q = self.prewarp(params, p);
        let pr = params;
        let h = match kind {
            NoiseKind::Perlin => self.perlin(q, pr.seed),
            NoiseKind::Fbm => self.fbm(q, pr.seed, pr.octaves, pr.lacunarity, pr.gain),
            NoiseKind::Billowy => self.billowy(q, pr.seed, pr.octaves, pr.lacunarity, pr.gain),
            NoiseKind::Ridged => self.ridged(q, pr.seed, pr.octaves, pr.lacunarity, pr.gain),
            NoiseKind::Iq => self.iq(q, pr.seed, pr.octaves, pr.lacunarity, pr.gain),
            NoiseKind::Swiss => self.swiss(q, pr.seed, pr.octaves, pr.lacunarity, pr.gain, pr.warp),
            NoiseKind::Jordan => self.jordan(
                q,
                pr.seed,
                pr.octaves,
                pr.lacunarity,
                pr.gain1,
                pr.gain,
                pr.warp0,
                pr.warp,
                pr.damp0,
                pr.damp,
                pr.damp_scale,
            ),
            NoiseKind::Erosive => self.erosive(
                q,
                pr.seed,
                pr.octaves,
                pr.lacunarity,
                pr.gain,
                pr.alpha,
                pr.beta,
            ),
        };
        post_power(h, pr.power)
    }

    /// Fills a `width` x `height` grid, texel (x, y) at p = offset + scale * (x, y), rows in
    /// parallel on all cores.
    pub fn generate(
        &self,
        kind: NoiseKind,
        params: &NoiseParams,
        width: u32,
        height: u32,
    ) -> Vec<f32> {
        let mut out = vec![0.0f32; width as usize * height as usize];
        out.par_chunks_mut(width as usize)
            .enumerate()
            .for_each(|(y, row)| {
                for (x, h) in row.iter_mut().enumerate() {
                    let p = [
                        params.offset[0] + params.scale * x as f32,
                        params.offset[1] + params.scale * y as f32,
                    ];
                    *h = self.noise_at(kind, params, p);
                }
            });
        out
    }
}

/// T_post: sign-preserving power.
#[inline]
pub fn post_power(h: f32, power: f32) -> f32 {
    if power == 1.0 {
        h
    } else {
        h.signum() * h.abs().powf(power)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables() -> CpuTables {
        CpuTables::new(&NoiseTables::default())
    }

    /// Deterministic points spread over many cells, negative coordinates included.
    fn points() -> impl Iterator<Item = Vec2> {
        (0..2000).map(|i| {
            let t = i as f32;
            [
                (t * 0.7312).sin() * 300.0 + t * 0.013,
                (t * 1.171).cos() * 300.0 - t * 0.007,
            ]
        })
    }

    #[test]
    fn deriv_matches_central_differences_of_perlin() {
        let t = tables();
        let h = 1e-3f32;
        for seed in [0, 5, -17] {
            for p in points() {
                let d = t.perlin_deriv(p, seed);
                // Divide by the step actually taken: p +- h rounds to f32 at large |p|.
                let (x0, x1, y0, y1) = (p[0] - h, p[0] + h, p[1] - h, p[1] + h);
                let fx = (t.perlin([x1, p[1]], seed) - t.perlin([x0, p[1]], seed)) / (x1 - x0);
                let fy = (t.perlin([p[0], y1], seed) - t.perlin([p[0], y0], seed)) / (y1 - y0);
                assert!(
                    (d[1] - fx).abs() < 2e-3 && (d[2] - fy).abs() < 2e-3,
                    "at {p:?}: {d:?} vs ({fx}, {fy})"
                );
                assert_eq!(d[0], t.perlin(p, seed), "value part must equal perlinNoise");
            }
        }
    }

    #[test]
    fn pseudo_deriv_value_equals_perlin_and_differs_in_gradient() {
        let t = tables();
        let mut differs = false;
        for p in points() {
            let a = t.perlin_pseudo_deriv(p, 3);
            let b = t.perlin_deriv(p, 3);
            assert_eq!(a[0], b[0]);
            differs |= (a[1] - b[1]).abs() > 1e-3;
        }
        assert!(
            differs,
            "the pseudo derivative omits the gradient terms, so it must differ somewhere"
        );
    }

    #[test]
    fn perlin_is_zero_on_the_lattice_and_continuous_across_edges() {
        let t = tables();
        for y in -20..20 {
            for x in -20..20 {
                let p = [x as f32, y as f32];
                assert_eq!(t.perlin(p, 9), 0.0, "at {p:?}");
                // Across the vertical edge x = const, at a non-lattice y.
                let yy = y as f32 + 0.37;
                let e = 1e-4f32;
                let (l, r) = (
                    t.perlin([x as f32 - e, yy], 9),
                    t.perlin([x as f32 + e, yy], 9),
                );
                assert!((l - r).abs() < 1e-3, "jump {l} -> {r} across x = {x}");
                let (dl, dr) = (
                    t.perlin_deriv([x as f32 - e, yy], 9),
                    t.perlin_deriv([x as f32 + e, yy], 9),
                );
                assert!(
                    (dl[1] - dr[1]).abs() < 1e-2 && (dl[2] - dr[2]).abs() < 1e-2,
                    "gradient jump across x = {x}"
                );
            }
        }
    }

    #[test]
    fn octave_sums_reduce_to_their_definitions() {
        let t = tables();
        let p = [12.34, -5.67];
        // One octave of fbm is perlin; billowy and ridged are |n| and 1 - |n|.
        let n = t.perlin(p, 4);
        assert_eq!(t.fbm(p, 4, 1, 1.92, 0.5), n);
        assert_eq!(t.billowy(p, 4, 1, 1.92, 0.5), n.abs());
        assert_eq!(t.ridged(p, 4, 1, 1.92, 0.5), 1.0 - n.abs());
        // Swiss without warp, with its height-faded gain, still starts as ridged noise.
        assert_eq!(t.swiss(p, 4, 1, 1.92, 0.5, 0.3), 1.0 - n.abs());
        // Jordan with no warp or damping (damp_scale 0) is a sum of squared octaves.
        let j = t.jordan(p, 4, 2, 2.0, 0.8, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0);
        let n2 = t.perlin([p[0] * 2.0, p[1] * 2.0], 5);
        assert!((j - (n * n + 0.8 * 0.5 * n2 * n2)).abs() < 1e-6);
        // Erosive with alpha 0 is ridged noise with valley damping s.
        let e = t.erosive(p, 4, 1, 1.92, 0.5, 0.0, 1.1);
        assert_eq!(e, 1.0 - n.abs());
    }

    #[test]
    fn power_keeps_the_sign() {
        assert_eq!(post_power(-0.5, 2.0), -0.25);
        assert_eq!(post_power(0.5, 2.0), 0.25);
        assert_eq!(post_power(0.3, 1.0), 0.3);
    }
}

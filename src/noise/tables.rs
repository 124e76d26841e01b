//! The two 256x256 RGBA8 lookup tables of the noise (Scape part 2), generated deterministically
//! from a table seed.
//!
//! * perm: texel (row y, col x) = (h(x,y), h(x,y+1), h(x+1,y), h(x+1,y+1)), the hashes of the four
//!   corners of lattice cell (x, y), with h(x, y) = P[(P[x] + y) & 255] for a seeded permutation P.
//! * grad: for noise seed s, the cell's corner gradients are
//!   g1 = grad[row (G+s)&255][col (R+s)&255] (corner (0,0) in xy, corner (0,1) in zw) and
//!   g2 = grad[row (A+s)&255][col (B+s)&255] (corners (1,0) and (1,1)), a component being
//!   `byte * 2/255 - 1`.
//!
//! Lattice consistency forces the grad table's shape. Corner (x, y+1) is g1.zw of cell (x, y),
//! read at grad[u][v] with u = h(x,y+1)+s, v = h(x,y)+s, and g1.xy of cell (x, y+1), read at
//! grad[w][u] with w = h(x,y+2)+s. Equality for every v and w means zw depends on the row alone
//! and xy on the column alone, through the same function: grad[r][c] = (G[c], G[r]) for one
//! 256-entry gradient list G. The gradient of lattice point q for seed s is then G[(h(q)+s)&255],
//! identical from all four cells that touch q, so the noise is continuous. G holds 256 unit
//! vectors at evenly spaced angles (isotropic), assigned by a second seeded permutation.

use std::f64::consts::TAU;

/// Side of both tables.
pub const TABLE_SIZE: usize = 256;
/// Table seed used unless `--table-seed` says otherwise.
pub const DEFAULT_TABLE_SEED: u64 = 2009;

/// Perm and grad tables, row-major (`index = row * 256 + col`), exactly the bytes the GPU uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoiseTables {
    pub seed: u64,
    pub perm: Vec<[u8; 4]>,
    pub grad: Vec<[u8; 4]>,
}

/// SplitMix64: tiny, fixed forever, so tables never change under a dependency upgrade.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n small: the modulo bias is below 2^-56).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn permutation(rng: &mut SplitMix64) -> [u8; TABLE_SIZE] {
    let mut p: [u8; TABLE_SIZE] = std::array::from_fn(|i| i as u8);
    for i in (1..TABLE_SIZE).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        p.swap(i, j);
    }
    p
}

/// A gradient component in [-1, 1] as the byte nearest to `(c + 1) / 2 * 255`.
fn encode_component(c: f64) -> u8 {
    ((c + 1.0) * 0.5 * 255.0).round().clamp(0.0, 255.0) as u8
}

/// Decodes a table byte exactly as the GLSL `decodeGrad` does.
#[inline]
pub fn decode_component(b: u8) -> f32 {
    f32::from(b) * (2.0 / 255.0) - 1.0
}

impl NoiseTables {
    pub fn new(seed: u64) -> Self {
        let mut rng = SplitMix64(seed);
        let p = permutation(&mut rng);
        let angle_order = permutation(&mut rng);
        let h = |x: usize, y: usize| p[(usize::from(p[x & 255]) + y) & 255];
        let mut perm = Vec::with_capacity(TABLE_SIZE * TABLE_SIZE);
        for y in 0..TABLE_SIZE {
            for x in 0..TABLE_SIZE {
                perm.push([h(x, y), h(x, y + 1), h(x + 1, y), h(x + 1, y + 1)]);
            }
        }
        let g: Vec<[u8; 2]> = angle_order
            .iter()
            .map(|&k| {
                let a = TAU * (f64::from(k) + 0.5) / TABLE_SIZE as f64;
                [encode_component(a.cos()), encode_component(a.sin())]
            })
            .collect();
        let mut grad = Vec::with_capacity(TABLE_SIZE * TABLE_SIZE);
        for row in 0..TABLE_SIZE {
            for col in 0..TABLE_SIZE {
                grad.push([g[col][0], g[col][1], g[row][0], g[row][1]]);
            }
        }
        Self { seed, perm, grad }
    }

    /// Perm texel of lattice cell (x, y) (coordinates wrap every 256).
    #[inline]
    pub fn perm_at(&self, x: i32, y: i32) -> [u8; 4] {
        self.perm[((y & 255) as usize) * TABLE_SIZE + (x & 255) as usize]
    }

    /// Grad texel at (row, col), both wrapped to 0..256.
    #[inline]
    pub fn grad_at(&self, row: i32, col: i32) -> [u8; 4] {
        self.grad[((row & 255) as usize) * TABLE_SIZE + (col & 255) as usize]
    }

    /// Gradients of the four corners of cell (x, y) for `seed`, in the order
    /// (0,0), (0,1), (1,0), (1,1), decoded, as the GPU computes them.
    pub fn corner_gradients(&self, x: i32, y: i32, seed: i32) -> [[f32; 2]; 4] {
        let [r, g, b, a] = self.perm_at(x, y).map(|c| i32::from(c) + seed);
        let g1 = self.grad_at(g, r).map(decode_component);
        let g2 = self.grad_at(a, b).map(decode_component);
        [
            [g1[0], g1[1]],
            [g1[2], g1[3]],
            [g2[0], g2[1]],
            [g2[2], g2[3]],
        ]
    }

    /// Perm table as raw RGBA bytes, row-major.
    pub fn perm_bytes(&self) -> &[u8] {
        bytemuck::cast_slice(&self.perm)
    }

    /// Grad table as raw RGBA bytes, row-major.
    pub fn grad_bytes(&self) -> &[u8] {
        bytemuck::cast_slice(&self.grad)
    }
}

impl Default for NoiseTables {
    fn default() -> Self {
        Self::new(DEFAULT_TABLE_SEED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_deterministic_and_seed_dependent() {
        assert_eq!(NoiseTables::new(7), NoiseTables::new(7));
        assert_ne!(NoiseTables::new(7).perm, NoiseTables::new(8).perm);
    }

    #[test]
    fn every_lattice_point_gets_one_gradient_from_every_cell() {
        let t = NoiseTables::default();
        for seed in [0, 1, 37, -5, 300] {
            for y in 0..TABLE_SIZE as i32 {
                for x in 0..TABLE_SIZE as i32 {
                    // Lattice point (x+1, y+1) is corner (1,1) of cell (x,y), (1,0) of (x,y+1),
                    // (0,1) of (x+1,y) and (0,0) of (x+1,y+1).
                    let a = t.corner_gradients(x, y, seed)[3];
                    let b = t.corner_gradients(x, y + 1, seed)[2];
                    let c = t.corner_gradients(x + 1, y, seed)[1];
                    let d = t.corner_gradients(x + 1, y + 1, seed)[0];
                    assert!(
                        a == b && b == c && c == d,
                        "point ({}, {}) seed {seed}: {a:?} {b:?} {c:?} {d:?}",
                        x + 1,
                        y + 1
                    );
                }
            }
        }
    }

    #[test]
    fn perm_texels_hash_their_four_corners() {
        let t = NoiseTables::default();
        for y in 0..TABLE_SIZE as i32 {
            for x in 0..TABLE_SIZE as i32 {
                let p = t.perm_at(x, y);
                assert_eq!(p[1], t.perm_at(x, y + 1)[0]);
                assert_eq!(p[2], t.perm_at(x + 1, y)[0]);
                assert_eq!(p[3], t.perm_at(x + 1, y + 1)[0]);
            }
        }
    }

    #[test]
    fn gradients_are_near_unit_length_and_isotropic() {
        let t = NoiseTables::default();
        let mut sum = [0.0f64; 2];
        for col in 0..TABLE_SIZE as i32 {
            let g = t.grad_at(0, col).map(decode_component);
            let len = (f64::from(g[0]).powi(2) + f64::from(g[1]).powi(2)).sqrt();
            assert!((len - 1.0).abs() < 0.01, "gradient {col} has length {len}");
            sum[0] += f64::from(g[0]);
            sum[1] += f64::from(g[1]);
        }
        assert!(
            sum[0].abs() < 0.2 && sum[1].abs() < 0.2,
            "gradients are biased: {sum:?}"
        );
    }
}

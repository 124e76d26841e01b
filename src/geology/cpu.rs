//! The CPU twin of the stream-power kernels (`shaders-glsl/geology/`): the same arithmetic in
//! the same order, texel by texel, and the exact D8 drainage accumulation the tests compare the
//! iterated area with.

use super::shared::GeologyPush;

/// Neighbour offsets in the model's order k = 0..7 (docs/geology.md); neighbour k's receiver
/// is the texel when it is `(k + 4) % 8`.
pub const OFFSETS: [[i32; 2]; 8] = [
    [0, 1],
    [1, 1],
    [1, 0],
    [1, -1],
    [0, -1],
    [-1, -1],
    [-1, 0],
    [-1, 1],
];

/// A pit's receiver.
pub const NO_RECEIVER: i32 = 8;

/// The region's state: heights z (m), drainage area A (m²) and the uplift map u, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub width: usize,
    pub height: usize,
    pub z: Vec<f32>,
    pub a: Vec<f32>,
    pub u: Vec<f32>,
}

impl State {
    /// Heights `z` with A = `a0` everywhere and uplift map `u` (None: 1 everywhere).
    pub fn new(width: usize, height: usize, z: Vec<f32>, u: Option<Vec<f32>>, a0: f32) -> Self {
        let n = width * height;
        assert_eq!(z.len(), n, "a whole region");
        let u = u.unwrap_or_else(|| vec![1.0; n]);
        assert_eq!(u.len(), n, "an uplift value per texel");
        Self {
            width,
            height,
            z,
            a: vec![a0; n],
            u,
        }
    }

    /// One Jacobi iteration (docs/geology.md, steps 1 to 3); returns the steady-state measure
    /// `max |z' − z| / steady_unit` over the texels that are not outlets (0 when all are).
    pub fn step(&mut self, p: &GeologyPush) -> f32 {
        use rayon::prelude::*;
        let r = receivers(&self.z, p);
        let weights = (p.multi_flow == 1).then(|| flow_weights(&self.z, p));
        let (w, h) = (self.width as i32, self.height as i32);
        let mut z_out = vec![0.0f32; self.z.len()];
        let mut a_out = vec![0.0f32; self.a.len()];
        let this = &*self;
        let most = z_out
            .par_chunks_mut(w as usize)
            .zip(a_out.par_chunks_mut(w as usize))
            .enumerate()
            .map(|(y, (z_row, a_row))| {
                let y = y as i32;
                let mut most = 0.0f32;
                for x in 0..w {
                    let i = (y * w + x) as usize;
                    let mut area = p.a0;
                    for (k, [dx, dy]) in OFFSETS.iter().enumerate() {
                        let (qx, qy) = (x + dx, y + dy);
                        if !inside(qx, qy, w, h) {
                            continue;
                        }
                        let j = (qy * w + qx) as usize;
                        match &weights {
                            // q's slope toward p: the same distance as p's toward q.
                            Some(inv) => {
                                let s = (this.z[j] - this.z[i]) * inv_delta(p, k);
                                if s > 0.0 {
                                    area += (this.a[j] * spow(s, p.flow_exponent)) * inv[j];
                                }
                            }
                            None if r[j] == ((k + 4) % 8) as i32 => area += this.a[j],
                            None => {}
                        }
                    }
                    a_row[x as usize] = area;
                    let zp = this.z[i];
                    let mut zn = zp;
                    if !outlet([x, y], p, zp) {
                        zn = this.texel(p, x, y, area, r[i]).unwrap_or(zp);
                        most = most.max((zn - zp).abs() / p.steady_unit);
                    }
                    z_row[x as usize] = zn;
                }
                most
            })
            .reduce(|| 0.0, f32::max);
        self.z = z_out;
        self.a = a_out;
        most
    }

    /// Step 3 for the interior texel (`x`, `y`) of area `area` and receiver `k`: its new height,
    /// None where it would not be finite (it then stays). With `p.stationary`, the height that
    /// solves the texel's steady-state equation instead ([`stationary`]).
    fn texel(&self, p: &GeologyPush, x: i32, y: i32, area: f32, k: i32) -> Option<f32> {
        let w = self.width as i32;
        let at = |x: i32, y: i32| self.z[(y * w + x) as usize];
        let zp = at(x, y);
        let u = self.u[(y * w + x) as usize];
        let mut zq = 0.0;
        let mut s = 0.0f32;
        if k != NO_RECEIVER {
            let [dx, dy] = OFFSETS[k as usize];
            zq = at(x + dx, y + dy);
            s = (zp - zq) * inv_delta(p, k as usize);
        }
        let sum = ((at(x + 1, y) + at(x - 1, y)) + at(x, y + 1)) + at(x, y - 1);
        let mut zu = if p.stationary == 1 {
            let receiver = (k != NO_RECEIVER).then(|| (zq, inv_delta(p, k as usize)));
            let zs = stationary(p, zp, area, receiver, sum, u);
            zp + p.relaxation * (zs - zp)
        } else {
            let mut e = 0.0f32;
            if k != NO_RECEIVER {
                e = (p.erodibility * spow(area, p.m)) * spow(s, p.n);
            }
            let lap = (sum - 4.0 * zp) / p.tau2;
            let rate = e - p.diffusion * lap;
            let mut zs = zp - p.dt * rate;
            if k != NO_RECEIVER {
                zs = zs.max(zq);
            }
            zs + (p.dt * p.uplift) * u
        };
        if p.critical == 1 && zu.is_finite() {
            // The threshold hillslope: at most each neighbour's height plus its rise. An interior
            // texel's neighbours are all in the region.
            for (k, [dx, dy]) in OFFSETS.iter().enumerate() {
                let rise = if k & 1 == 1 { p.rise_diag } else { p.rise_axis };
                zu = zu.min(at(x + dx, y + dy) + rise);
            }
        }
        zu.is_finite().then_some(zu)
    }
}

/// The height of a texel that is not an outlet solving its steady-state equation, the
/// neighbours held (one Jacobi sweep of the stationary model; docs/geology.md, "Solving for the
/// steady state"): `K·A^m·S = U·u + κ·L` (n = 1, which the run checks), the stream-power term
/// `f·(z − z_q)` with `f = K·A^m/δ`,
/// so `z = (f·z_q + U·u + c·Σ) / (f + 4c)` with `c = κ/τ²` and Σ the four axis neighbours'
/// heights; then at least `z_q + Δt·U·u`, where the model's receiver clamp holds a channel at
/// steady state. A pit solves `U·u + κ·L = 0` (`(U·u + c·Σ) / 4c`), or rises by a step of uplift
/// where there is no creep. `receiver`: the receiver's height and 1/δ.
/// The kernel's `stationary` does the same arithmetic in the same order.
pub fn stationary(
    p: &GeologyPush,
    zp: f32,
    area: f32,
    receiver: Option<(f32, f32)>,
    sum: f32,
    u: f32,
) -> f32 {
    let c = p.diffusion / p.tau2;
    let source = p.uplift * u;
    let lift = (p.dt * p.uplift) * u;
    match receiver {
        Some((zq, inv_delta)) => {
            let f = (p.erodibility * spow(area, p.m)) * inv_delta;
            let z = ((f * zq + source) + c * sum) / (f + 4.0 * c);
            z.max(zq + lift)
        }
        None if c > 0.0 => (source + c * sum) / (4.0 * c),
        None => zp + lift,
    }
}

/// How the texels that are not outlets still move one iteration on from a state: each texel's
/// `|z′ − z| / steady_unit`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// Its median.
    pub median: f32,
    /// The fraction of texels above 0.01 (where the steady-state measure, their maximum, asks
    /// every texel to be).
    pub above: f64,
    /// The fraction of texels above 0.01 that also move by more than one f32 step of their
    /// height (the spacing of f32 values at |z|): a texel moving by one step may change by far
    /// less in exact arithmetic, and on high ground one step can exceed 0.01 of a step's uplift.
    pub above_one_step: f64,
    /// The fraction of texels above 0.01 whose next iteration moves them the other way (an
    /// oscillation, where a texel settling toward its steady height keeps its direction).
    pub above_turning: f64,
}

/// [`Spread`] one iteration on from `state` (z and A at the end of a run), and a second
/// iteration for the turning texels.
pub fn spread(state: &State, p: &GeologyPush) -> Spread {
    let mut next = state.clone();
    next.step(p);
    let mut after = next.clone();
    after.step(p);
    let w = state.width;
    // (|z′ − z| / unit, beyond one f32 step, turning)
    let moves: Vec<(f32, bool, bool)> = (0..state.z.len())
        .filter(|&i| !outlet([(i % w) as i32, (i / w) as i32], p, state.z[i]))
        .map(|i| {
            let (a, b, c) = (state.z[i], next.z[i], after.z[i]);
            let step = f32::from_bits(a.abs().to_bits() + 1) - a.abs();
            let turning = (b - a) * (c - b) < 0.0;
            ((b - a).abs() / p.steady_unit, (b - a).abs() > step, turning)
        })
        .collect();
    if moves.is_empty() {
        return Spread {
            median: 0.0,
            above: 0.0,
            above_one_step: 0.0,
            above_turning: 0.0,
        };
    }
    let n = moves.len() as f64;
    let count = |f: &dyn Fn(&(f32, bool, bool)) -> bool| {
        moves.iter().filter(|m| m.0 > 0.01 && f(m)).count() as f64 / n
    };
    let mut moved: Vec<f32> = moves.iter().map(|m| m.0).collect();
    moved.sort_by(f32::total_cmp);
    Spread {
        median: moved[moved.len() / 2],
        above: count(&|_| true),
        above_one_step: count(&|m| m.1),
        above_turning: count(&|m| m.2),
    }
}

/// `x^e` with the exponents the model is used with taken exactly (1: x, 0.5: the square root,
/// 2: x·x), as the kernel's `spow` takes them; `powf` otherwise.
pub fn spow(x: f32, e: f32) -> f32 {
    if e == 1.0 {
        x
    } else if e == 0.5 {
        x.sqrt()
    } else if e == 2.0 {
        x * x
    } else {
        x.powf(e)
    }
}

/// Whether texel `xy` of height `z` in the region of `p` is an outlet: on the region's border,
/// or at or below the base level when one is given. Outlets never change height.
pub fn outlet([x, y]: [i32; 2], p: &GeologyPush, z: f32) -> bool {
    let [w, h] = p.size;
    x == 0 || y == 0 || x == w - 1 || y == h - 1 || (p.has_base == 1 && z <= p.base_level)
}

/// Whether (x, y) lies in a `w` x `h` grid.
pub(super) fn inside(x: i32, y: i32, w: i32, h: i32) -> bool {
    x >= 0 && y >= 0 && x < w && y < h
}

/// 1/δ_k as the host rounded it: 1/τ for the axis neighbours (even k), 1/(τ·√2) for the
/// diagonal ones. Slopes are drops times it, as on the GPU.
fn inv_delta(p: &GeologyPush, k: usize) -> f32 {
    if k & 1 == 1 {
        p.inv_diag
    } else {
        p.inv_tau
    }
}

/// Step 1 for every texel of the `p.size` grid `z`: the index k of its receiver, or
/// [`NO_RECEIVER`].
pub fn receivers(z: &[f32], p: &GeologyPush) -> Vec<i32> {
    use rayon::prelude::*;
    let w = p.size[0];
    let mut r = vec![NO_RECEIVER; z.len()];
    r.par_chunks_mut(w as usize)
        .enumerate()
        .for_each(|(y, row)| {
            for (x, k) in row.iter_mut().enumerate() {
                *k = receiver(z, p, x as i32, y as i32);
            }
        });
    r
}

/// Multi-flow routing's denominators: for every texel of `z`, 1 / the sum of `s_k^p` over its
/// lower in-region neighbours (p = `flow_exponent`), 0 for a pit. A texel's area goes to each
/// lower neighbour in the share `s_k^p` times this.
pub fn flow_weights(z: &[f32], p: &GeologyPush) -> Vec<f32> {
    use rayon::prelude::*;
    let [w, h] = p.size;
    let mut out = vec![0.0f32; z.len()];
    out.par_chunks_mut(w as usize)
        .enumerate()
        .for_each(|(y, row)| {
            let y = y as i32;
            for (x, v) in row.iter_mut().enumerate() {
                let x = x as i32;
                let zp = z[(y * w + x) as usize];
                let mut sum = 0.0f32;
                for (k, [dx, dy]) in OFFSETS.iter().enumerate() {
                    let (qx, qy) = (x + dx, y + dy);
                    if inside(qx, qy, w, h) {
                        let s = (zp - z[(qy * w + qx) as usize]) * inv_delta(p, k);
                        if s > 0.0 {
                            sum += spow(s, p.flow_exponent);
                        }
                    }
                }
                *v = if sum > 0.0 { 1.0 / sum } else { 0.0 };
            }
        });
    out
}

/// The receiver of texel (`x`, `y`): the in-region neighbour of steepest descent, the lowest k
/// on equal slopes.
pub fn receiver(z: &[f32], p: &GeologyPush, x: i32, y: i32) -> i32 {
    let [w, h] = p.size;
    let zp = z[(y * w + x) as usize];
    let mut best = NO_RECEIVER;
    let mut steepest = 0.0f32;
    for (k, [dx, dy]) in OFFSETS.iter().enumerate() {
        let (qx, qy) = (x + dx, y + dy);
        if !inside(qx, qy, w, h) {
            continue;
        }
        let s = (zp - z[(qy * w + qx) as usize]) * inv_delta(p, k);
        if s > steepest {
            steepest = s;
            best = k as i32;
        }
    }
    best
}

/// The exact D8 drainage area of every texel of `z` (m²): `a0` plus the areas of every texel
/// whose chain of receivers passes through it, summed from the highest texel down (in f64).
pub fn d8_area(z: &[f32], p: &GeologyPush) -> Vec<f64> {
    let r = receivers(z, p);
    let w = p.size[0];
    let mut order: Vec<usize> = (0..z.len()).collect();
    order.sort_by(|&i, &j| z[j].total_cmp(&z[i]));
    let mut area = vec![f64::from(p.a0); z.len()];
    for i in order {
        let k = r[i];
        if k != NO_RECEIVER {
            let [dx, dy] = OFFSETS[k as usize];
            let (x, y) = ((i as i32) % w, (i as i32) / w);
            let j = ((y + dy) * w + (x + dx)) as usize;
            area[j] += area[i];
        }
    }
    area
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geology::GeologyParams;

    /// Flat ground with uplift and no erosion: every texel off the border rises by one step of
    /// uplift (median 1, all of them moving); without uplift nothing moves; the border's
    /// outlets are not counted.
    #[test]
    fn the_spread_counts_texels_off_the_border_by_the_steps_of_uplift_they_move() {
        let params = GeologyParams {
            erodibility: 0.0,
            diffusion: 0.0,
            ..GeologyParams::default()
        };
        let p = params.push([6, 5], 1.0, None);
        let flat = State::new(6, 5, vec![10.0; 30], None, p.a0);
        let s = spread(&flat, &p);
        assert!(
            (s.median - 1.0).abs() < 1e-3 && s.above == 1.0 && s.above_one_step == 1.0,
            "{s:?}"
        );
        // Rising steadily: none turns.
        assert_eq!(s.above_turning, 0.0, "{s:?}");
        let mut u = vec![1.0; 30];
        u[2 * 6 + 2] = 0.0; // one of the 12 interior texels does not rise
        let one_still = State::new(6, 5, vec![10.0; 30], Some(u), p.a0);
        let s = spread(&one_still, &p);
        assert!((s.above - 11.0 / 12.0).abs() < 1e-9, "{s:?}");
        // At 1,000 m a step of uplift of 5e-5 m is less than one f32 step (6.1e-5 m): every
        // texel rises by exactly one step, above 0.01 of the unit but not beyond one step.
        let slow = GeologyParams {
            uplift_rate: 1e-5,
            ..params
        };
        let p = slow.push([6, 5], 1.0, None);
        let high = State::new(6, 5, vec![1000.0; 30], None, p.a0);
        let s = spread(&high, &p);
        assert!(
            s.above == 1.0 && s.above_one_step == 0.0 && s.median > 1.0,
            "{s:?}"
        );
        // Creep at its stability limit (Δt·κ/τ² = 1/4) on a checkerboard: each iteration turns
        // the interior's bumps into dips and back.
        let creep = GeologyParams {
            uplift_rate: 0.0,
            erodibility: 0.0,
            diffusion: 0.25,
            time_step: 1.0,
            ..GeologyParams::default()
        };
        let p = creep.push([12, 12], 1.0, None);
        let board = (0..144)
            .map(|i| {
                10.0 + if (i % 12 + i / 12) % 2 == 0 {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect();
        let s = spread(&State::new(12, 12, board, None, p.a0), &p);
        assert!(s.above_turning > 0.5, "{s:?}");
    }
}

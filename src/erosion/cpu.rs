//! The CPU twin of the erosion kernels (`shaders-glsl/erosion/*.comp`): the same passes, the
//! same operations in the same order, rows in parallel (rayon). The reference in tests and the
//! baseline in benchmarks.

use super::params::Model;
use super::shared::ErosionPush;
use crate::falloff::{falloff, Falloff};
use rayon::prelude::*;

/// The eight neighbours in the thermal kernels' order, and whether each is diagonal.
const NEIGHBOURS: [(i32, i32); 8] = [
    (-1, -1),
    (0, -1),
    (1, -1),
    (-1, 0),
    (1, 0),
    (-1, 1),
    (0, 1),
    (1, 1),
];

fn distance(k: usize) -> f32 {
    if matches!(k, 0 | 2 | 5 | 7) {
        std::f32::consts::SQRT_2
    } else {
        1.0
    }
}

/// q at texel (x, y): 1 in a region run, the brush falloff in a brush run (`weightAt`).
pub fn weight(p: &ErosionPush, x: i32, y: i32) -> f32 {
    if p.radius <= 0.0 {
        return 1.0;
    }
    let dx = x as f32 - p.center[0];
    let dy = y as f32 - p.center[1];
    let d = (dx * dx + dy * dy).sqrt();
    if d < p.radius {
        let kind = Falloff::from_index(p.falloff).unwrap_or(Falloff::Parabolic);
        falloff(d, p.radius, p.inner_radius, kind, p.falloff_power)
    } else {
        0.0
    }
}

/// The simulation state of a region, row-major: terrain `b`, water `d`, suspended sediment `s`
/// and outflow flux `f` (left, right, top, bottom).
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub width: usize,
    pub height: usize,
    pub b: Vec<f32>,
    pub d: Vec<f32>,
    pub s: Vec<f32>,
    pub f: Vec<[f32; 4]>,
}

/// What hydraulic part 2 leaves per texel (row-major): terrain `b` after erosion or
/// deposition, water `d` before evaporation and suspended sediment `s` before transport.
struct Water {
    b: Vec<f32>,
    d: Vec<f32>,
    s: Vec<f32>,
}

impl State {
    /// Terrain `b` (row-major, `width` x `height`), no water, sediment or flux.
    pub fn new(width: usize, height: usize, b: Vec<f32>) -> Self {
        assert_eq!(b.len(), width * height, "a whole region");
        let n = b.len();
        Self {
            width,
            height,
            b,
            d: vec![0.0; n],
            s: vec![0.0; n],
            f: vec![[0.0; 4]; n],
        }
    }

    /// One step of `model`: a hydraulic step, then a thermal step, as the model asks (the GPU's
    /// order).
    pub fn step(&mut self, p: &ErosionPush, model: Model) {
        if model.hydraulic() {
            self.hydraulic_step(p);
        }
        if model.thermal() {
            self.thermal_step(p);
        }
    }

    /// One hydraulic step (`flux.comp`, `water.comp`, `transport.comp`).
    pub fn hydraulic_step(&mut self, p: &ErosionPush) {
        // Part 1: flux, in place (each texel reads only its own flux).
        self.flux_pass(p);
        // Part 2: water, velocity, erosion and deposition.
        let mut water = self.water_pass(p);
        // Part 3: transport in flux form, then evaporation.
        self.transport_pass(p, &mut water);
        self.b = water.b;
        self.d = water.d;
    }

    /// Hydraulic part 1 (`flux.comp`): each texel's outflow flux, in place.
    fn flux_pass(&mut self, p: &ErosionPush) {
        let w = self.width;
        let (b, d) = (&self.b, &self.d);
        let surface = |x: i32, y: i32| {
            let i = y as usize * w + x as usize;
            let d1 = d[i] + p.dt * p.rain * weight(p, x, y);
            b[i] + d1
        };
        self.f.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
            let y = y as i32;
            for (x, fo) in row.iter_mut().enumerate() {
                let x = x as i32;
                let i = y as usize * w + x as usize;
                let d1 = d[i] + p.dt * p.rain * weight(p, x, y);
                let h = b[i] + d1;
                let k = p.dt * p.pipe_area * p.gravity;
                let pipe = |old: f32, nx: i32, ny: i32| (old + k * (h - surface(nx, ny))).max(0.0);
                let fl = if x > 0 { pipe(fo[0], x - 1, y) } else { 0.0 };
                let fr = if x < p.size[0] - 1 {
                    pipe(fo[1], x + 1, y)
                } else {
                    0.0
                };
                let ft = if y > 0 { pipe(fo[2], x, y - 1) } else { 0.0 };
                let fb = if y < p.size[1] - 1 {
                    pipe(fo[3], x, y + 1)
                } else {
                    0.0
                };
                let sum = ((fl + fr) + ft) + fb;
                let scale = if sum > 0.0 {
                    (d1 / (p.dt * sum)).min(1.0)
                } else {
                    1.0
                };
                *fo = [scale * fl, scale * fr, scale * ft, scale * fb];
            }
        });
    }

    /// Hydraulic part 2 (`water.comp`): each texel's new water depth, and its terrain and
    /// suspended sediment after erosion or deposition.
    fn water_pass(&self, p: &ErosionPush) -> Water {
        let w = self.width;
        let n = self.b.len();
        let mut b_out = vec![0.0f32; n];
        let mut d2 = vec![0.0f32; n];
        let mut s1 = vec![0.0f32; n];
        let (b, d, f, s) = (&self.b, &self.d, &self.f, &self.s);
        let terrain = |x: i32, y: i32| {
            let x = x.clamp(0, p.size[0] - 1);
            let y = y.clamp(0, p.size[1] - 1);
            b[y as usize * w + x as usize]
        };
        b_out
            .par_chunks_mut(w)
            .zip(d2.par_chunks_mut(w))
            .zip(s1.par_chunks_mut(w))
            .enumerate()
            .for_each(|(y, ((bo, dn_row), s1_row))| {
                let y = y as i32;
                for x in 0..w {
                    let xi = x as i32;
                    let i = y as usize * w + x;
                    let d1 = d[i] + p.dt * p.rain * weight(p, xi, y);
                    let fo = f[i];
                    let in_l = if xi > 0 { f[i - 1][1] } else { 0.0 };
                    let in_r = if xi < p.size[0] - 1 { f[i + 1][0] } else { 0.0 };
                    let in_t = if y > 0 { f[i - w][3] } else { 0.0 };
                    let in_b = if y < p.size[1] - 1 { f[i + w][2] } else { 0.0 };
                    let out_sum = ((fo[0] + fo[1]) + fo[2]) + fo[3];
                    let in_sum = ((in_l + in_r) + in_t) + in_b;
                    let dn = d1 + p.dt * (in_sum - out_sum);
                    let dm = 0.5 * (d1 + dn);
                    let (mut u, mut v) = (0.0f32, 0.0f32);
                    if dm > 1e-4 {
                        u = (((in_l - fo[0]) + fo[1]) - in_r) / (2.0 * dm);
                        v = (((in_t - fo[2]) + fo[3]) - in_b) / (2.0 * dm);
                    }
                    let gx = 0.5 * (terrain(xi + 1, y) - terrain(xi - 1, y));
                    let gy = 0.5 * (terrain(xi, y + 1) - terrain(xi, y - 1));
                    let g2 = gx * gx + gy * gy;
                    let sin_a = p.min_tilt.max(g2.sqrt() / (1.0 + g2).sqrt());
                    let c = p.capacity
                        * sin_a
                        * (u * u + v * v).sqrt()
                        * (dm / p.erosion_depth).min(1.0);
                    let (mut bh, mut sh) = (b[i], s[i]);
                    if c > sh {
                        let e = p.dt * p.dissolve * (c - sh);
                        bh -= e;
                        sh += e;
                    } else {
                        let e = p.dt * p.deposit * (sh - c);
                        bh += e;
                        sh -= e;
                    }
                    bo[x] = bh;
                    dn_row[x] = dn;
                    s1_row[x] = sh;
                }
            });
        Water {
            b: b_out,
            d: d2,
            s: s1,
        }
    }

    /// Hydraulic part 3 (`transport.comp`): moves the suspended sediment `water.s` along the
    /// flux into `self.s`, then evaporates `water.d`.
    fn transport_pass(&mut self, p: &ErosionPush, water: &mut Water) {
        let w = self.width;
        let (d, f) = (&self.d, &self.f);
        let before =
            |x: i32, y: i32| d[y as usize * w + x as usize] + p.dt * p.rain * weight(p, x, y);
        let share = |flux: f32, d1: f32| {
            if d1 > 0.0 {
                p.dt * flux / d1
            } else {
                0.0
            }
        };
        let s1 = &water.s;
        self.s
            .par_chunks_mut(w)
            .zip(water.d.par_chunks_mut(w))
            .enumerate()
            .for_each(|(y, (s_row, d_row))| {
                let y = y as i32;
                for x in 0..w {
                    let xi = x as i32;
                    let i = y as usize * w + x;
                    let d1 = before(xi, y);
                    let fo = f[i];
                    let stay = (((1.0 - share(fo[0], d1)) - share(fo[1], d1)) - share(fo[2], d1))
                        - share(fo[3], d1);
                    let mut sn = s1[i] * stay;
                    if xi > 0 {
                        sn += s1[i - 1] * share(f[i - 1][1], before(xi - 1, y));
                    }
                    if xi < p.size[0] - 1 {
                        sn += s1[i + 1] * share(f[i + 1][0], before(xi + 1, y));
                    }
                    if y > 0 {
                        sn += s1[i - w] * share(f[i - w][3], before(xi, y - 1));
                    }
                    if y < p.size[1] - 1 {
                        sn += s1[i + w] * share(f[i + w][2], before(xi, y + 1));
                    }
                    s_row[x] = sn;
                    d_row[x] *= 1.0 - p.evaporation * p.dt;
                }
            });
    }

    /// One thermal step (`thermal_out.comp`, `thermal_in.comp`).
    pub fn thermal_step(&mut self, p: &ErosionPush) {
        let w = self.width;
        let inside = |x: i32, y: i32| x >= 0 && y >= 0 && x < p.size[0] && y < p.size[1];
        let b = &self.b;
        let mut ratio = vec![0.0f32; b.len()];
        ratio.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
            let y = y as i32;
            for (x, r) in row.iter_mut().enumerate() {
                let x = x as i32;
                let h = b[y as usize * w + x as usize];
                let (mut total, mut most) = (0.0f32, 0.0f32);
                for (k, (dx, dy)) in NEIGHBOURS.into_iter().enumerate() {
                    let (nx, ny) = (x + dx, y + dy);
                    if !inside(nx, ny) {
                        continue;
                    }
                    let hn = b[ny as usize * w + nx as usize];
                    let e = ((h - hn) - p.talus_tan * distance(k)).max(0.0);
                    total += e;
                    most = most.max(e);
                }
                let a = weight(p, x, y) * p.thermal_rate * most * 0.5;
                *r = if total > 0.0 { a / total } else { 0.0 };
            }
        });
        let mut b_out = vec![0.0f32; b.len()];
        b_out.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
            let y = y as i32;
            for (x, out) in row.iter_mut().enumerate() {
                let x = x as i32;
                let i = y as usize * w + x as usize;
                let (h, own) = (b[i], ratio[i]);
                let (mut sent, mut got) = (0.0f32, 0.0f32);
                for (k, (dx, dy)) in NEIGHBOURS.into_iter().enumerate() {
                    let (nx, ny) = (x + dx, y + dy);
                    if !inside(nx, ny) {
                        continue;
                    }
                    let j = ny as usize * w + nx as usize;
                    let hn = b[j];
                    let e_out = ((h - hn) - p.talus_tan * distance(k)).max(0.0);
                    let e_in = ((hn - h) - p.talus_tan * distance(k)).max(0.0);
                    sent += own * e_out;
                    got += ratio[j] * e_in;
                }
                *out = (h - sent) + got;
            }
        });
        self.b = b_out;
    }

    /// The end of a run: suspended sediment settles where it is (`b += s`), water is dropped.
    pub fn settle(&mut self) {
        for (b, s) in self.b.iter_mut().zip(&mut self.s) {
            *b += *s;
            *s = 0.0;
        }
        self.d.iter_mut().for_each(|d| *d = 0.0);
        self.f.iter_mut().for_each(|f| *f = [0.0; 4]);
    }
}

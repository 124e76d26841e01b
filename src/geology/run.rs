//! A whole stream-power run over a height grid (docs/geology.md): heights enter as metres
//! `z = h · height_unit`, the region is iterated coarse to fine — downsampled by 2^k, iterated,
//! carried up a level (z and A bilinear, the outlets back at their own heights), iterated again —
//! on the GPU or the CPU twin, and heights leave as `h = z / height_unit`. The finest level runs
//! the model exactly; a texel the run left unchanged keeps its height bit for bit.

use super::cpu::{outlet, State};
use super::gpu::{GpuGeology, Kernels, ITERATIONS_PER_SUBMIT};
use super::params::{GeologyParams, GeologyRun, MAX_COARSE_LEVELS};
use crate::gpu::{Gpu, GpuTimer, Result};
use crate::pages::DocumentDesc;
use std::sync::Arc;

/// What a run asks for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunSpec {
    pub params: GeologyParams,
    /// Texel size τ (m) and metres per height unit.
    pub tau: f32,
    pub height_unit: f32,
    /// The base level as z (m above the document's height origin), when given.
    pub base_z: Option<f32>,
    /// Iterations per level, or the most per level when `until` is given.
    pub iterations: usize,
    /// Stop a level once its steady-state measure is at most this.
    pub until: Option<f32>,
    /// Levels below the region (each half the one above), iterated first.
    pub coarse: u32,
}

impl RunSpec {
    /// `run` over document `d`: its texel size and height unit, the base level as z.
    pub fn of(run: &GeologyRun, d: &DocumentDesc) -> Self {
        Self {
            params: run.params,
            tau: d.texel_size() as f32,
            height_unit: d.height_unit() as f32,
            base_z: run
                .params
                .base_level
                .map(|b| (f64::from(b) - d.units.height_origin.unwrap_or(0.0)) as f32),
            iterations: run.iterations as usize,
            until: run.until_steady,
            coarse: run.coarse,
        }
    }
}

/// What one level ran.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LevelReport {
    pub size: [u32; 2],
    pub iterations: usize,
    /// `max |z' − z| / (Δt·U)` over non-outlets at the level's last measured iteration.
    pub measure: f32,
}

/// A run's results beside the heights it wrote.
#[derive(Clone, Debug, Default)]
pub struct RunOutput {
    /// Drainage area A (m²) of the region's texels at the end.
    pub area: Vec<f32>,
    /// Coarsest level first.
    pub levels: Vec<LevelReport>,
    /// GPU time of the iterations when a timer was given, ms.
    pub gpu_ms: f64,
}

impl RunOutput {
    /// The finest level's last measure.
    pub fn measure(&self) -> f32 {
        self.levels.last().map_or(0.0, |l| l.measure)
    }

    /// Simulated years over every level.
    pub fn years(&self, dt: f32) -> f64 {
        self.levels.iter().map(|l| l.iterations as f64).sum::<f64>() * f64::from(dt)
    }
}

/// The sizes of the region and its coarse levels, finest first: each half the one above
/// (rounded up), as many as asked while both sides stay at least 8 texels.
pub fn level_sizes(size: [u32; 2], coarse: u32) -> Vec<[u32; 2]> {
    let mut sizes = vec![size];
    for _ in 0..coarse {
        let [w, h] = *sizes.last().unwrap();
        let next = [w.div_ceil(2), h.div_ceil(2)];
        if next[0] < 8 || next[1] < 8 {
            break;
        }
        sizes.push(next);
    }
    sizes
}

/// The coarse levels a run to steady state takes when not told: as many as keep the coarsest
/// at least 64 texels a side, at most [`MAX_COARSE_LEVELS`].
pub fn auto_coarse(size: [u32; 2]) -> u32 {
    let side = size[0].min(size[1]);
    let mut k = 0;
    while k < MAX_COARSE_LEVELS && side >> (k + 1) >= 64 {
        k += 1;
    }
    k
}

/// `v` (`size`) averaged over 2x2 blocks (the texels a block has at an odd edge).
pub fn downsample(v: &[f32], size: [u32; 2]) -> Vec<f32> {
    let [w, h] = size.map(|s| s as usize);
    let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
    let mut out = Vec::with_capacity(cw * ch);
    for cy in 0..ch {
        for cx in 0..cw {
            let mut sum = 0.0f32;
            let mut n = 0.0f32;
            for y in 2 * cy..(2 * cy + 2).min(h) {
                for x in 2 * cx..(2 * cx + 2).min(w) {
                    sum += v[y * w + x];
                    n += 1.0;
                }
            }
            out.push(sum / n);
        }
    }
    out
}

/// `v` of the coarse `from` size carried up to `to` (each side twice, or one less) bilinearly,
/// texel centres aligned.
pub fn upsample(v: &[f32], from: [u32; 2], to: [u32; 2]) -> Vec<f32> {
    let [cw, ch] = from.map(|s| s as usize);
    let [w, h] = to.map(|s| s as usize);
    let coord = |x: usize, n: usize| {
        let c = ((x as f32 + 0.5) * 0.5 - 0.5).clamp(0.0, (n - 1) as f32);
        let i = (c.floor() as usize).min(n.saturating_sub(2));
        (i, c - i as f32)
    };
    let mut out = Vec::with_capacity(w * h);
    for y in 0..h {
        let (y0, fy) = coord(y, ch);
        let y1 = (y0 + 1).min(ch - 1);
        for x in 0..w {
            let (x0, fx) = coord(x, cw);
            let x1 = (x0 + 1).min(cw - 1);
            let top = v[y0 * cw + x0] + (v[y0 * cw + x1] - v[y0 * cw + x0]) * fx;
            let bottom = v[y1 * cw + x0] + (v[y1 * cw + x1] - v[y1 * cw + x0]) * fx;
            out.push(top + (bottom - top) * fy);
        }
    }
    out
}

/// Runs `spec` over the `size` grid `heights` (height units, row-major) in place, with the
/// uplift map `uplift` (None: 1 everywhere), on `gpu` (None: the CPU twin), calling
/// `progress(level from the coarsest, iterations done at that level, measure)` as it goes.
pub fn run(
    gpu: Option<(&Arc<Gpu>, &Arc<Kernels>)>,
    heights: &mut [f32],
    size: [u32; 2],
    uplift: Option<&[f32]>,
    spec: &RunSpec,
    timer: Option<&GpuTimer>,
    mut progress: impl FnMut(usize, usize, f32),
) -> Result<RunOutput> {
    let sizes = level_sizes(size, spec.coarse);
    let unit = spec.height_unit;
    // The original heights (m) and uplift at every level, finest first.
    let mut zs = vec![heights.iter().map(|h| h * unit).collect::<Vec<f32>>()];
    let mut us = vec![uplift.map_or_else(|| vec![1.0; heights.len()], <[f32]>::to_vec)];
    for l in 1..sizes.len() {
        zs.push(downsample(&zs[l - 1], sizes[l - 1]));
        us.push(downsample(&us[l - 1], sizes[l - 1]));
    }
    let mut out = RunOutput::default();
    let mut carried: Option<(Vec<f32>, Vec<f32>)> = None;
    for (step, l) in (0..sizes.len()).rev().enumerate() {
        let lsize = sizes[l];
        let tau = spec.tau * (1u32 << l) as f32;
        let push = spec.params.push(lsize, tau, spec.base_z);
        let mut state = State::new(
            lsize[0] as usize,
            lsize[1] as usize,
            zs[l].clone(),
            Some(us[l].clone()),
            push.a0,
        );
        if let Some((z, a)) = carried.take() {
            let from = sizes[l + 1];
            let z = upsample(&z, from, lsize);
            state.a = upsample(&a, from, lsize);
            let w = lsize[0] as usize;
            for (i, (dst, up)) in state.z.iter_mut().zip(z).enumerate() {
                if !outlet([(i % w) as i32, (i / w) as i32], &push, *dst) {
                    *dst = up;
                }
            }
        }
        let (iterations, measure, state) = match gpu {
            Some((gpu, kernels)) => {
                let mut g = GpuGeology::new(gpu, kernels, &state)?;
                let (n, m) = g.run(&push, spec.iterations, spec.until, timer, |d, m| {
                    progress(step, d, m)
                })?;
                out.gpu_ms += g.gpu_ms();
                (n, m, g.state()?)
            }
            None => run_twin(state, &push, spec, |d, m| progress(step, d, m)),
        };
        out.levels.push(LevelReport {
            size: lsize,
            iterations,
            measure,
        });
        carried = Some((state.z, state.a));
    }
    let (z, a) = carried.expect("at least the region's level");
    for ((h, z), z0) in heights.iter_mut().zip(&z).zip(&zs[0]) {
        if z != z0 {
            *h = z / unit;
        }
    }
    out.area = a;
    Ok(out)
}

/// The twin's iterations of one level, measuring where the GPU does (the last iteration of
/// each submission) and stopping where it would.
fn run_twin(
    mut state: State,
    push: &super::shared::GeologyPush,
    spec: &RunSpec,
    mut progress: impl FnMut(usize, f32),
) -> (usize, f32, State) {
    let mut measure = f32::INFINITY;
    let mut done = 0;
    while done < spec.iterations {
        let n = ITERATIONS_PER_SUBMIT.min(spec.iterations - done);
        for _ in 0..n {
            measure = state.step(push);
        }
        done += n;
        progress(done, measure);
        if spec.until.is_some_and(|t| measure <= t) {
            break;
        }
    }
    (done, measure, state)
}

//! A whole stream-power run over a height grid (docs/geology.md): heights enter as metres
//! `z = h · height_unit`, the region is iterated coarse to fine — downsampled by 2^k, iterated,
//! carried up a level (z and A bilinear, the outlets back at their own heights), iterated again —
//! on the GPU or the CPU twin, and heights leave as `h = z / height_unit`. The finest level runs
//! the model exactly; a texel the run left unchanged keeps its height bit for bit. Depressions
//! are filled first when asked ([`super::fill`]), on the region before any level is made.

use super::cpu::{outlet, State};
use super::gpu::{GpuGeology, Kernels, ITERATIONS_PER_SUBMIT};
use super::params::{GeologyParams, GeologyRun, MAX_COARSE_LEVELS};
use super::shared::GeologyPush;
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
    /// Solve for the steady state between the measured iterations (`GeologyRun::solve_steady`).
    pub solve_steady: bool,
    /// Levels below the region (each half the one above), iterated first.
    pub coarse: u32,
    /// Stop the whole run after this many iterations over every level (a run stopped by hand,
    /// replayed): finer levels do not run, and the heights are carried up from where it was.
    pub stop_after: Option<usize>,
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
            solve_steady: run.solve_steady,
            coarse: run.coarse,
            stop_after: run.stop_after.map(|n| n as usize),
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

    /// Iterations over every level.
    pub fn iterations(&self) -> usize {
        self.levels.iter().map(|l| l.iterations).sum()
    }

    /// Simulated years over every level.
    pub fn years(&self, dt: f32) -> f64 {
        self.iterations() as f64 * f64::from(dt)
    }

    /// How `run` ended, as the CLI, the editor and the bench say it: the years it simulated
    /// (or that it solved for the steady state) and the finest level's measure; for a run until
    /// steady, whether that level got there. A run that stops at its iterations' cap is not
    /// steady, and a solved one is then not said to be solved. A run stopped by hand
    /// (`stop_after`) gets no verdict: it may have stopped in a coarse level, or, solving,
    /// between measured iterations, where the measure is a sweep's change.
    pub fn text(&self, run: &GeologyRun) -> String {
        let m = self.measure();
        let years = self.years(run.params.time_step);
        let done = self.iterations();
        if done == 0 {
            return "no iterations run".into();
        }
        if run.stop_after.is_some_and(|n| done >= n as usize) {
            return match run.solve_steady {
                true => format!("stopped while solving for the steady state, measure {m:.4}"),
                false => format!("{years:.0} years simulated, stopped at measure {m:.4}"),
            };
        }
        match (run.until_steady, run.solve_steady) {
            (Some(t), true) if m <= t => {
                format!("solved for the steady state (measure {m:.4} ≤ {t})")
            }
            (Some(t), true) => format!("not steady: the solver stopped at measure {m:.4} > {t}"),
            (Some(t), false) if m <= t => {
                format!("{years:.0} years simulated, steady (measure {m:.4} ≤ {t})")
            }
            (Some(t), false) => {
                format!("{years:.0} years simulated, not steady (measure {m:.4} > {t})")
            }
            (None, _) => format!("{years:.0} years simulated, steady-state measure {m:.4}"),
        }
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
    let mut runner = Runner::new(gpu, heights, size, uplift, spec);
    while !runner.advance(ITERATIONS_PER_SUBMIT, timer)? {
        let p = runner.progress();
        progress(p.level, p.done, p.measure);
    }
    let p = runner.progress();
    progress(p.level, p.done, p.measure);
    runner.finish(heights)
}

/// Where a run is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunProgress {
    /// The level under way (or the last one run), counted from the coarsest, of `levels`.
    pub level: usize,
    pub levels: usize,
    /// Iterations done at that level, and its measure after them.
    pub done: usize,
    pub measure: f32,
    /// Iterations over every level.
    pub total: usize,
}

/// One level's simulation under way.
enum Sim {
    Gpu(Box<GpuGeology>),
    Twin(State),
}

/// The level under way: its index (0: the region), push constants and simulation.
struct Level {
    l: usize,
    push: GeologyPush,
    done: usize,
    measure: f32,
    sim: Sim,
}

/// A run under way, one submission of at most [`ITERATIONS_PER_SUBMIT`] iterations at a time
/// ([`run`] runs one to the end; the editor's live run shows it between frames). The steps,
/// where each level measures and where it stops, do not depend on how the run is driven.
pub struct Runner {
    gpu: Option<(Arc<Gpu>, Arc<Kernels>)>,
    spec: RunSpec,
    /// The region's size and its levels', finest first.
    sizes: Vec<[u32; 2]>,
    /// The heights (m) the iterations begin from (depressions filled, when asked) and the
    /// uplift at every level, finest first.
    zs: Vec<Vec<f32>>,
    /// The region's heights (m) before filling, where a fill changed any: what a texel must
    /// still hold at the end to keep its stored height bit for bit.
    unfilled: Option<Vec<f32>>,
    us: Vec<Vec<f32>>,
    level: Option<Level>,
    /// z and A of the last level ended, and its index.
    carried: Option<(Vec<f32>, Vec<f32>, usize)>,
    out: RunOutput,
    total: usize,
    complete: bool,
}

impl Runner {
    /// A run of `spec` over the `size` grid `heights` (height units) with the uplift map
    /// `uplift` (None: 1 everywhere), on `gpu` (None: the CPU twin); nothing runs yet.
    pub fn new(
        gpu: Option<(&Arc<Gpu>, &Arc<Kernels>)>,
        heights: &[f32],
        size: [u32; 2],
        uplift: Option<&[f32]>,
        spec: &RunSpec,
    ) -> Self {
        let sizes = level_sizes(size, spec.coarse);
        let unit = spec.height_unit;
        let mut zs = vec![heights.iter().map(|h| h * unit).collect::<Vec<f32>>()];
        let mut unfilled = None;
        if let Some(eps) = spec.params.fill_depressions {
            let mut z = zs[0].clone();
            let push = spec.params.push(size, spec.tau, spec.base_z);
            if super::fill::priority_flood(&mut z, &push, eps) > 0 {
                unfilled = Some(std::mem::replace(&mut zs[0], z));
            }
        }
        let mut us = vec![uplift.map_or_else(|| vec![1.0; heights.len()], <[f32]>::to_vec)];
        for l in 1..sizes.len() {
            zs.push(downsample(&zs[l - 1], sizes[l - 1]));
            us.push(downsample(&us[l - 1], sizes[l - 1]));
        }
        Self {
            gpu: gpu.map(|(g, k)| (g.clone(), k.clone())),
            spec: *spec,
            sizes,
            zs,
            unfilled,
            us,
            level: None,
            carried: None,
            out: RunOutput::default(),
            total: 0,
            complete: false,
        }
    }

    /// The state the last level to end left: z (m) and A (m²) at that level, and its index (0:
    /// the region itself). None before a level has ended.
    pub fn ended(&self) -> Option<(&[f32], &[f32], usize)> {
        self.carried
            .as_ref()
            .map(|(z, a, l)| (z.as_slice(), a.as_slice(), *l))
    }

    /// Whether every level has run (or the run stopped where it was told to).
    pub fn complete(&self) -> bool {
        self.complete
    }

    pub fn progress(&self) -> RunProgress {
        let levels = self.sizes.len();
        let (l, done, measure) = match (&self.level, self.out.levels.last()) {
            (Some(lv), _) => (lv.l, lv.done, lv.measure),
            (None, Some(r)) => (levels - self.out.levels.len(), r.iterations, r.measure),
            (None, None) => (levels - 1, 0, f32::INFINITY),
        };
        RunProgress {
            level: levels - 1 - l,
            levels,
            done,
            measure,
            total: self.total,
        }
    }

    /// Runs the next submission of at most `most` iterations (beginning the next level first
    /// where one ended); true once the run is complete. A level measures itself every
    /// [`ITERATIONS_PER_SUBMIT`] iterations and at its end, however the submissions fall, so
    /// where it stops does not depend on `most`. With `timer`, GPU submissions are timed.
    pub fn advance(&mut self, most: usize, timer: Option<&GpuTimer>) -> Result<bool> {
        if self.complete {
            return Ok(true);
        }
        let lv = match &mut self.level {
            Some(lv) => lv,
            None => {
                let l = match &self.carried {
                    Some((_, _, l)) => l - 1,
                    None => self.sizes.len() - 1,
                };
                let level = self.begin(l)?;
                self.level.insert(level)
            }
        };
        let spec = &self.spec;
        let left = spec
            .stop_after
            .map_or(usize::MAX, |s| s.saturating_sub(self.total));
        let n = (ITERATIONS_PER_SUBMIT - lv.done % ITERATIONS_PER_SUBMIT)
            .min(spec.iterations - lv.done)
            .min(left)
            .min(most.max(1));
        // The submission's last iteration is a measured one: every 64th of the level, and its
        // last. Solving for the steady state, every iteration but the measured ones (which step
        // the model, so the measure is the model's) solves the stationary equations.
        let end = lv.done + n;
        let measured = end % ITERATIONS_PER_SUBMIT == 0 || end >= spec.iterations;
        let stationary = match spec.solve_steady {
            true => n - usize::from(measured),
            false => 0,
        };
        lv.measure = match &mut lv.sim {
            Sim::Gpu(g) => g.run(&lv.push, n, stationary, None, timer, |_, _| {})?.1,
            Sim::Twin(state) => {
                let mut m = f32::INFINITY;
                for i in 0..n {
                    let push = GeologyPush {
                        stationary: i32::from(i < stationary),
                        ..lv.push
                    };
                    m = state.step(&push);
                }
                m
            }
        };
        lv.done = end;
        self.total += n;
        let steady = measured && spec.until.is_some_and(|t| lv.measure <= t);
        let stopped = spec.stop_after.is_some_and(|s| self.total >= s);
        if lv.done >= spec.iterations || steady || stopped {
            self.end_level()?;
            self.complete = stopped || self.carried.as_ref().is_some_and(|c| c.2 == 0);
        }
        Ok(self.complete)
    }

    /// Stops the run where it is: the level under way ends after the iterations it ran, and no
    /// finer level runs (finish carries its heights up to the region).
    pub fn stop(&mut self) -> Result<()> {
        if self.level.is_some() {
            self.end_level()?;
        }
        self.complete = true;
        Ok(())
    }

    /// The heights (height units) as the run has them now, carried up to the region, from the
    /// `original` heights the run began with (texels unchanged keep their value).
    pub fn heights_now(&self, original: &[f32]) -> Result<Vec<f32>> {
        let (z, l) = match (&self.level, &self.carried) {
            (Some(lv), _) => (self.read_z(lv)?, lv.l),
            (None, Some((z, _, l))) => (z.clone(), *l),
            (None, None) => (self.zs[0].clone(), 0),
        };
        let z = self.carry_z(z, l, 0);
        let mut h = original.to_vec();
        self.to_heights(&z, &mut h);
        Ok(h)
    }

    /// Ends the run (stopping the level under way, if any) and writes its heights into
    /// `heights` (height units; a texel the run left unchanged keeps its value bit for bit).
    pub fn finish(mut self, heights: &mut [f32]) -> Result<RunOutput> {
        self.stop()?;
        let (z, a, l) = self.carried.take().expect("a run ends at least one level");
        let a = (1..=l)
            .rev()
            .fold(a, |a, k| upsample(&a, self.sizes[k], self.sizes[k - 1]));
        let z = self.carry_z(z, l, 0);
        self.to_heights(&z, heights);
        self.out.area = a;
        Ok(self.out)
    }

    /// Makes level `l`: its original heights, or where a coarser level ended, that level's
    /// z and A carried up (the outlets at their own heights).
    fn begin(&mut self, l: usize) -> Result<Level> {
        let lsize = self.sizes[l];
        let tau = self.spec.tau * (1u32 << l) as f32;
        let push = self.spec.params.push(lsize, tau, self.spec.base_z);
        let mut state = State::new(
            lsize[0] as usize,
            lsize[1] as usize,
            self.zs[l].clone(),
            Some(self.us[l].clone()),
            push.a0,
        );
        if let Some((z, a, from)) = self.carried.take() {
            state.z = self.carry_z(z, from, l);
            state.a = upsample(&a, self.sizes[from], lsize);
        }
        let sim = match &self.gpu {
            Some((gpu, kernels)) => {
                let multi_flow = push.multi_flow == 1;
                Sim::Gpu(Box::new(GpuGeology::new(gpu, kernels, &state, multi_flow)?))
            }
            None => Sim::Twin(state),
        };
        Ok(Level {
            l,
            push,
            done: 0,
            measure: f32::INFINITY,
            sim,
        })
    }

    /// Ends the level under way: its report, and its z and A kept to carry up.
    fn end_level(&mut self) -> Result<()> {
        let lv = self.level.take().expect("a level under way");
        self.out.levels.push(LevelReport {
            size: self.sizes[lv.l],
            iterations: lv.done,
            measure: lv.measure,
        });
        let state = match lv.sim {
            Sim::Gpu(g) => {
                self.out.gpu_ms += g.gpu_ms();
                g.state()?
            }
            Sim::Twin(state) => state,
        };
        self.carried = Some((state.z, state.a, lv.l));
        Ok(())
    }

    fn read_z(&self, lv: &Level) -> Result<Vec<f32>> {
        Ok(match &lv.sim {
            Sim::Gpu(g) => g.z()?,
            Sim::Twin(state) => state.z.clone(),
        })
    }

    /// `z` of level `from` carried up level by level to level `to`: bilinear, with each
    /// level's outlets put back at their own heights.
    fn carry_z(&self, mut z: Vec<f32>, from: usize, to: usize) -> Vec<f32> {
        for k in (to + 1..=from).rev() {
            let lsize = self.sizes[k - 1];
            let tau = self.spec.tau * (1u32 << (k - 1)) as f32;
            let push = self.spec.params.push(lsize, tau, self.spec.base_z);
            let up = upsample(&z, self.sizes[k], lsize);
            let w = lsize[0] as usize;
            z = self.zs[k - 1]
                .iter()
                .zip(up)
                .enumerate()
                .map(|(i, (orig, up))| {
                    match outlet([(i % w) as i32, (i / w) as i32], &push, *orig) {
                        true => *orig,
                        false => up,
                    }
                })
                .collect();
        }
        z
    }

    /// `z` (m, the region) as heights into `heights`: texels the run left unchanged keep
    /// their value bit for bit, without the round trip through metres.
    fn to_heights(&self, z: &[f32], heights: &mut [f32]) {
        let unit = self.spec.height_unit;
        let start = self.unfilled.as_ref().unwrap_or(&self.zs[0]);
        for ((dst, z), z0) in heights.iter_mut().zip(z).zip(start) {
            if z != z0 {
                *dst = z / unit;
            }
        }
    }
}

//! Noise generation: every kind on the GPU and on its CPU twin (all cores), against two CPU
//! peers with the same octaves, lacunarity and gain (one thread and all cores): the `noise`
//! crate's `Fbm<Perlin>` (scalar f64, slow) and `simdnoise`'s fBm (SIMD f32 with runtime
//! SSE4.1/AVX2 dispatch, the strongest CPU library that builds from the registry; the honest
//! peer).

use super::ceilings::{Heater, HEAT_LONG_MS, HEAT_SHORT_MS};
use super::{
    median, ratio, spread, BenchOptions, Ceilings, NoiseResult, NoiseSection, PeerBaseline,
};
use crate::gpu::Gpu;
use crate::noise::{CpuTables, GpuNoise, NoiseKind, NoiseSettings, NoiseTables};
use anyhow::{anyhow, Result};
use rayon::prelude::*;
use std::sync::Arc;
use std::time::Instant;

/// Assumed FLOPs of one octave of each kind (hand counts of noise.glsl, an FMA counted as 2,
/// floor and abs as 1; docs/bench.md): a Perlin evaluation is ~70 (cell wrap 6, gradient decode
/// 16, fade 14, corner planes 23, blend 8), the octave loop adds ~6, derivatives and warps more.
pub(super) fn flops_per_octave(kind: NoiseKind) -> f64 {
    match kind {
        NoiseKind::Perlin => 70.0,
        NoiseKind::Fbm => 76.0,
        NoiseKind::Billowy => 77.0,
        NoiseKind::Ridged => 78.0,
        NoiseKind::Iq => 95.0,
        NoiseKind::Swiss => 125.0,
        NoiseKind::Jordan => 135.0,
        NoiseKind::Erosive => 130.0,
    }
}

/// Octaves a sample of `s` evaluates (plain Perlin has one).
pub(super) fn octaves(s: &NoiseSettings) -> u32 {
    if s.kind.uses_octaves() {
        s.octaves.max(0) as u32
    } else {
        1
    }
}

/// Assumed FLOPs of one sample of `s` (position scaling included).
pub(super) fn flops_per_sample(s: &NoiseSettings) -> f64 {
    4.0 + flops_per_octave(s.kind) * f64::from(octaves(s))
}

/// Median wall time of `f`, seconds, over the peers' repeats (1 with `--quick`, else 3).
fn median_seconds(o: &BenchOptions, mut f: impl FnMut()) -> f64 {
    let reps = if o.quick { 1 } else { 3 };
    let times: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    median(&times)
}

fn peer(o: &BenchOptions, width: u32, height: u32, settings: &NoiseSettings) -> PeerBaseline {
    use noise::{Fbm, MultiFractal, NoiseFn, Perlin};
    let fbm = Fbm::<Perlin>::new(settings.seed as u32)
        .set_octaves(settings.octaves as usize)
        .set_lacunarity(f64::from(settings.lacunarity))
        .set_persistence(f64::from(settings.gain))
        .set_frequency(1.0);
    let scale = f64::from(settings.scale);
    let row = |y: u32, out: &mut [f32]| {
        for (x, h) in out.iter_mut().enumerate() {
            *h = fbm.get([x as f64 * scale, f64::from(y) * scale]) as f32;
        }
    };
    // One thread: a sixteenth of the rows is plenty to time.
    let rows_1t = (height / 16).max(1);
    let mut line = vec![0.0f32; width as usize];
    let one = median_seconds(o, || {
        for y in 0..rows_1t {
            row(y, &mut line);
        }
        std::hint::black_box(&line);
    });
    let mut grid = vec![0.0f32; width as usize * height as usize];
    let all = median_seconds(o, || {
        grid.par_chunks_mut(width as usize)
            .enumerate()
            .for_each(|(y, out)| row(y as u32, out));
        std::hint::black_box(&grid);
    });
    PeerBaseline {
        implementation: "noise 0.9 Fbm<Perlin> (f64)".to_string(),
        octaves: settings.octaves as u32,
        one_thread_msamples_s: ratio(f64::from(rows_1t) * f64::from(width), one * 1e6),
        all_cores_msamples_s: ratio(f64::from(width) * f64::from(height), all * 1e6),
        threads: rayon::current_num_threads(),
    }
}

/// `simdnoise`'s fBm over the same grid: one thread on a sixteenth of the rows, then all cores
/// on stripes of 64 rows.
fn simd_peer(o: &BenchOptions, width: u32, height: u32, settings: &NoiseSettings) -> PeerBaseline {
    let fbm = |y0: u32, rows: u32| {
        let mut b =
            simdnoise::NoiseBuilder::fbm_2d_offset(0.0, width as usize, y0 as f32, rows as usize);
        b.with_seed(settings.seed)
            .with_freq(settings.scale)
            .with_octaves(settings.octaves.clamp(1, 255) as u8)
            .with_lacunarity(settings.lacunarity)
            .with_gain(settings.gain);
        b.generate().0
    };
    let rows_1t = (height / 16).max(1);
    let one = median_seconds(o, || {
        std::hint::black_box(fbm(0, rows_1t));
    });
    let all = median_seconds(o, || {
        let stripes: Vec<u32> = (0..height).step_by(64).collect();
        let v: Vec<Vec<f32>> = stripes
            .par_iter()
            .map(|&y| fbm(y, 64.min(height - y)))
            .collect();
        std::hint::black_box(v);
    });
    PeerBaseline {
        implementation: "simdnoise 3.1 fbm_2d (f32 SIMD, runtime dispatch)".to_string(),
        octaves: settings.octaves as u32,
        one_thread_msamples_s: ratio(f64::from(rows_1t) * f64::from(width), one * 1e6),
        all_cores_msamples_s: ratio(f64::from(width) * f64::from(height), all * 1e6),
        threads: rayon::current_num_threads(),
    }
}

/// FastNoise2's fBm of Perlin noise (C++, SIMD with runtime dispatch; the `fastnoise2` feature)
/// over the same grid, the same octaves, lacunarity and gain: one thread on a sixteenth of the
/// rows, then all cores on stripes of 64 rows. None without the feature.
#[cfg(feature = "fastnoise2")]
fn fastnoise2_peer(
    o: &BenchOptions,
    width: u32,
    height: u32,
    settings: &NoiseSettings,
) -> Option<PeerBaseline> {
    use fastnoise2::generator::prelude::*;
    let node = perlin()
        .fbm(settings.gain, 0.0, settings.octaves, settings.lacunarity)
        .build();
    let step = settings.scale;
    let fbm = |node: &fastnoise2::generator::GeneratorWrapper<fastnoise2::SafeNode>,
               y0: u32,
               rows: u32| {
        let mut out = vec![0.0f32; width as usize * rows as usize];
        node.gen_uniform_grid_2d(
            &mut out,
            0.0,
            y0 as f32 * step,
            width as i32,
            rows as i32,
            step,
            step,
            settings.seed,
        );
        out
    };
    let rows_1t = (height / 16).max(1);
    let one = median_seconds(o, || {
        std::hint::black_box(fbm(&node, 0, rows_1t));
    });
    let all = median_seconds(o, || {
        let stripes: Vec<u32> = (0..height).step_by(64).collect();
        let v: Vec<Vec<f32>> = stripes
            .par_iter()
            .map_init(|| node.clone(), |n, &y| fbm(n, y, 64.min(height - y)))
            .collect();
        std::hint::black_box(v);
    });
    Some(PeerBaseline {
        implementation: format!(
            "FastNoise2 0.4 FractalFBm(Perlin) (f32 SIMD, runtime dispatch, FastSIMD level {})",
            node.get_simd_level()
        ),
        octaves: settings.octaves as u32,
        one_thread_msamples_s: ratio(f64::from(rows_1t) * f64::from(width), one * 1e6),
        all_cores_msamples_s: ratio(f64::from(width) * f64::from(height), all * 1e6),
        threads: rayon::current_num_threads(),
    })
}

#[cfg(not(feature = "fastnoise2"))]
fn fastnoise2_peer(_: &BenchOptions, _: u32, _: u32, _: &NoiseSettings) -> Option<PeerBaseline> {
    None
}

/// Every noise measurement.
pub(super) fn names() -> Vec<String> {
    NoiseKind::ALL
        .iter()
        .map(|k| format!("noise/{}", k.name()))
        .collect()
}

pub(super) fn measure(
    gpu: &Arc<Gpu>,
    o: &BenchOptions,
    ceilings: &Ceilings,
    tables: &NoiseTables,
    heater: &Heater,
) -> Result<Option<NoiseSection>> {
    let kinds: Vec<NoiseKind> = NoiseKind::ALL
        .into_iter()
        .filter(|k| o.wants(&format!("noise/{}", k.name())))
        .collect();
    if kinds.is_empty() {
        return Ok(None);
    }
    let side: u32 = if o.quick { 1024 } else { 4096 };
    let peer = peer(o, side, side, &NoiseSettings::new(NoiseKind::Fbm));
    let simd = simd_peer(o, side, side, &NoiseSettings::new(NoiseKind::Fbm));
    let fast = fastnoise2_peer(o, side, side, &NoiseSettings::new(NoiseKind::Fbm));
    for p in [&peer, &simd].into_iter().chain(fast.as_ref()) {
        eprintln!(
            "noise: peer {}: {:.1} Msamples/s on 1 thread, {:.1} on {}",
            p.implementation, p.one_thread_msamples_s, p.all_cores_msamples_s, p.threads
        );
    }
    let mut gpu_noise = GpuNoise::new(gpu, tables)?;
    let bench = NoiseBench {
        o,
        ceilings,
        heater,
        side,
        cpu: CpuTables::new(tables),
        peer: &peer,
        simd: &simd,
        fast: fast.as_ref(),
    };
    let mut results = Vec::new();
    for kind in kinds {
        let s = NoiseSettings::new(kind);
        let times = bench.time(&mut gpu_noise, &s)?;
        results.push(bench.result(&s, &times));
    }
    Ok(Some(NoiseSection {
        width: side,
        height: side,
        peer,
        simd_peer: Some(simd),
        fastnoise2_peer: fast,
        kinds: results,
    }))
}

/// What every noise measurement of a run shares.
struct NoiseBench<'a> {
    o: &'a BenchOptions,
    ceilings: &'a Ceilings,
    heater: &'a Heater,
    /// Side of the generated square, samples.
    side: u32,
    cpu: CpuTables,
    peer: &'a PeerBaseline,
    simd: &'a PeerBaseline,
    /// FastNoise2, where built with it.
    fast: Option<&'a PeerBaseline>,
}

/// The times of one noise kind, and how far the GPU's heights are from the CPU twin's.
struct NoiseTimes {
    cpu_ms: f64,
    shared_ms: f64,
    gpu_ms: f64,
    gpu_spread: f64,
    diff: f64,
}

impl NoiseBench<'_> {
    /// Times noise `s` on the CPU twin, then on the GPU (the shared-memory gradient path, then
    /// the default table-fetch path), and compares their heights.
    fn time(&self, gpu_noise: &mut GpuNoise, s: &NoiseSettings) -> Result<NoiseTimes> {
        let (side, kind) = (self.side, s.kind);
        let params = s.params();
        let cpu_reps = if self.o.quick { 1 } else { 3 };
        // The CPU twin first: the GPU runs then follow the heater without a CPU gap.
        let mut cpu_heights = Vec::new();
        let cpu_ms = median(
            &(0..cpu_reps)
                .map(|_| {
                    let t = Instant::now();
                    cpu_heights = self.cpu.generate(kind, &params, side, side);
                    t.elapsed().as_secs_f64() * 1e3
                })
                .collect::<Vec<_>>(),
        );
        self.heater.heat(HEAT_LONG_MS)?;
        // The shared-memory gradient path, then the default table-fetch path.
        gpu_noise.set_shared_gradients(true);
        let (shared_ms, _, _) = self.time_gpu(gpu_noise, s)?;
        gpu_noise.set_shared_gradients(false);
        let (gpu_ms, gpu_spread, heights) = self.time_gpu(gpu_noise, s)?;
        let diff = heights
            .iter()
            .zip(&cpu_heights)
            .map(|(g, c)| f64::from((g - c).abs() / c.abs().max(1.0)))
            .fold(0.0, f64::max);
        Ok(NoiseTimes {
            cpu_ms,
            shared_ms,
            gpu_ms,
            gpu_spread,
            diff,
        })
    }

    /// Generates `s` on the GPU (warm-up, then the repeats, each after heating): the median and
    /// spread of the repeats' GPU times (ms), and the last run's heights.
    fn time_gpu(&self, noise: &mut GpuNoise, s: &NoiseSettings) -> Result<(f64, f64, Vec<f32>)> {
        let (o, side) = (self.o, self.side);
        let mut heights = Vec::new();
        let mut times = Vec::new();
        for i in 0..o.warmup + o.repeats {
            self.heater.heat(HEAT_SHORT_MS)?;
            let run = noise.generate(s, side, side)?;
            let ns = run.gpu_ns.ok_or_else(|| anyhow!("no timestamps"))?;
            if i >= o.warmup {
                times.push(ns * 1e-6);
            }
            heights = run.heights;
        }
        Ok((median(&times), spread(&times), heights))
    }

    /// The result of noise `s` from its times (rates, fractions of the ceilings, against the
    /// peers), its line printed.
    fn result(&self, s: &NoiseSettings, t: &NoiseTimes) -> NoiseResult {
        let kind = s.kind;
        let samples = f64::from(self.side) * f64::from(self.side);
        let (ceilings, peer, simd) = (self.ceilings, self.peer, self.simd);
        let (cpu_ms, gpu_ms) = (t.cpu_ms, t.gpu_ms);
        let gpu_msps = ratio(samples, gpu_ms * 1e3);
        let cpu_msps = ratio(samples, cpu_ms * 1e3);
        let flops = flops_per_sample(s);
        let write_gb_s = ratio(samples * 4.0, gpu_ms * 1e6);
        let gflop_s = ratio(samples * flops, gpu_ms * 1e6);
        let r = NoiseResult {
            name: format!("noise/{}", kind.name()),
            kind: kind.name().to_string(),
            octaves: octaves(s),
            gpu_ms,
            gpu_spread: t.gpu_spread,
            gpu_ms_shared_gradients: t.shared_ms,
            shared_gradients_speedup: ratio(gpu_ms, t.shared_ms),
            gpu_msamples_s: gpu_msps,
            cpu_twin_ms: cpu_ms,
            cpu_twin_msamples_s: cpu_msps,
            gpu_over_cpu_twin: ratio(gpu_msps, cpu_msps),
            gpu_over_peer_all_cores: ratio(gpu_msps, peer.all_cores_msamples_s),
            cpu_twin_over_peer_all_cores: ratio(cpu_msps, peer.all_cores_msamples_s),
            gpu_over_simd_peer_all_cores: ratio(gpu_msps, simd.all_cores_msamples_s),
            gpu_over_fastnoise2_all_cores: self
                .fast
                .map(|f| ratio(gpu_msps, f.all_cores_msamples_s)),
            gpu_write_gb_s: write_gb_s,
            fraction_of_copy: ratio(write_gb_s, ceilings.copy_image.gb_s),
            flops_per_sample: flops,
            gpu_gflop_s: gflop_s,
            fraction_of_fma: ratio(gflop_s, ceilings.fma.gflop_s),
            gpu_fetches_g_s: ratio(samples * 3.0 * f64::from(octaves(s)), gpu_ms * 1e6),
            max_rel_diff_vs_cpu_twin: t.diff,
        };
        eprintln!(
            "{}: GPU {:.3} ms ({:.0} Msamples/s, {:.1}% of FMA), CPU twin {:.1} Msamples/s, GPU/twin {:.2}x, GPU/peer {:.2}x, GPU/SIMD peer {:.2}x{}",
            r.name,
            r.gpu_ms,
            r.gpu_msamples_s,
            r.fraction_of_fma * 100.0,
            r.cpu_twin_msamples_s,
            r.gpu_over_cpu_twin,
            r.gpu_over_peer_all_cores,
            r.gpu_over_simd_peer_all_cores,
            r.gpu_over_fastnoise2_all_cores
                .map_or(String::new(), |f| format!(", GPU/FastNoise2 {f:.2}x"))
        );
        r
    }
}

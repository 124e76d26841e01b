//! `scarp noise`: one noise kind over a grid, on the GPU or the CPU twin, timed.

use super::args::{parse_pair, parse_size, Backend};
use super::{check_validation, open_gpu};
use crate::noise::{
    CpuTables, GpuNoise, NoiseKind, NoiseSettings, NoiseTables, DEFAULT_TABLE_SEED,
};
use crate::terrain::export::{check_writable, write_heights};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::time::Instant;

/// Where the flags' defaults come from: the library's, so journals and the CLI agree.
const D: NoiseSettings = NoiseSettings::new(NoiseKind::Fbm);

#[derive(Args)]
pub struct NoiseArgs {
    /// Noise function.
    #[arg(long, value_enum)]
    kind: NoiseKind,
    /// Grid size, WIDTHxHEIGHT.
    #[arg(long, value_parser = parse_size)]
    size: (u32, u32),
    /// Noise units per texel: texel (x, y) samples offset + scale * (x, y).
    #[arg(long, default_value_t = D.scale)]
    scale: f32,
    /// Noise-space position of texel (0, 0), X,Y [default: 0,0].
    #[arg(long, value_parser = parse_pair, allow_hyphen_values = true)]
    offset: Option<(f32, f32)>,
    /// Noise seed; octave i uses seed + i.
    #[arg(long, default_value_t = D.seed)]
    seed: i32,
    /// Octaves (1..=32); ignored by perlin.
    #[arg(long, default_value_t = D.octaves)]
    octaves: i32,
    /// Frequency ratio between octaves.
    #[arg(long, default_value_t = D.lacunarity)]
    lacunarity: f32,
    /// Amplitude ratio between octaves.
    #[arg(long, default_value_t = D.gain)]
    gain: f32,
    /// Swiss: gradient warp (default 0.15); Jordan: warp by finer octaves (default 0.35).
    #[arg(long)]
    warp: Option<f32>,
    /// Jordan: amplitude of the second octave.
    #[arg(long, default_value_t = D.gain1)]
    gain1: f32,
    /// Jordan: warp by the coarsest octave.
    #[arg(long, default_value_t = D.warp0)]
    warp0: f32,
    /// Jordan: damping by the coarsest octave.
    #[arg(long, default_value_t = D.damp0)]
    damp0: f32,
    /// Jordan: damping by finer octaves.
    #[arg(long, default_value_t = D.damp)]
    damp: f32,
    /// Jordan: how far damping can lower amplitudes.
    #[arg(long, default_value_t = D.damp_scale)]
    damp_scale: f32,
    /// Erosive: feature displacement along the ridge gradient.
    #[arg(long, default_value_t = D.alpha)]
    alpha: f32,
    /// Erosive: roughness near valleys.
    #[arg(long, default_value_t = D.beta)]
    beta: f32,
    /// Pre-warp amount (paper eq. 8 alpha); 0 = off.
    #[arg(long, default_value_t = D.prewarp_amount)]
    prewarp_amount: f32,
    /// Pre-warp frequency (eq. 8 beta).
    #[arg(long, default_value_t = D.prewarp_scale)]
    prewarp_scale: f32,
    /// Octaves of the pre-warp fBm.
    #[arg(long, default_value_t = D.prewarp_octaves)]
    prewarp_octaves: i32,
    /// T_post exponent, sign-preserving (eq. 5); 1 = off.
    #[arg(long, default_value_t = D.power)]
    power: f32,
    #[arg(long, value_enum, default_value_t = Backend::Gpu)]
    backend: Backend,
    #[arg(long, default_value_t = DEFAULT_TABLE_SEED)]
    table_seed: u64,
    /// Generate this many times and report the median time (the file holds the last run).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    repeat: u32,
    /// Output file: .r32 or .png.
    #[arg(long)]
    out: PathBuf,
}

impl NoiseArgs {
    /// The settings the flags ask for; flags left out keep the kind's defaults.
    pub fn settings(&self) -> NoiseSettings {
        let defaults = NoiseSettings::new(self.kind);
        NoiseSettings {
            kind: self.kind,
            scale: self.scale,
            offset: self.offset.map_or(defaults.offset, |(x, y)| [x, y]),
            seed: self.seed,
            octaves: self.octaves,
            lacunarity: self.lacunarity,
            gain: self.gain,
            warp: self.warp.unwrap_or(defaults.warp),
            gain1: self.gain1,
            warp0: self.warp0,
            damp0: self.damp0,
            damp: self.damp,
            damp_scale: self.damp_scale,
            alpha: self.alpha,
            beta: self.beta,
            prewarp_amount: self.prewarp_amount,
            prewarp_scale: self.prewarp_scale,
            prewarp_octaves: self.prewarp_octaves,
            power: self.power,
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

pub fn run(args: &NoiseArgs) -> Result<()> {
    let settings = args.settings();
    settings.validate().map_err(anyhow::Error::msg)?;
    // Fail before any work if the output can't be written.
    check_writable(&args.out).map_err(anyhow::Error::msg)?;
    let (w, h) = args.size;
    let samples = f64::from(w) * f64::from(h);
    let tables = NoiseTables::new(args.table_seed);
    let (heights, seconds, clock, device) = match args.backend {
        Backend::Gpu => {
            let gpu = open_gpu()?;
            let mut noise = GpuNoise::new(&gpu, &tables)?;
            // Untimed warm-up: drivers compile pipelines lazily (lavapipe's JIT).
            noise.generate(&settings, w.min(64), h.min(4))?;
            let mut times = Vec::new();
            let mut last = None;
            for _ in 0..args.repeat {
                let run = noise.generate(&settings, w, h)?;
                times.push(run.gpu_ns.map(|ns| ns * 1e-9));
                last = Some(run.heights);
            }
            check_validation(&gpu)?;
            let (secs, clock) = match times.iter().copied().collect::<Option<Vec<_>>>() {
                Some(t) => (median(t), "GPU (timestamps)"),
                None => (f64::NAN, "GPU (no timestamps on this queue)"),
            };
            (
                last.expect("repeat >= 1"),
                secs,
                clock,
                gpu.info().to_string(),
            )
        }
        Backend::Cpu => {
            let cpu = CpuTables::new(&tables);
            let params = settings.params();
            let mut times = Vec::new();
            let mut last = None;
            for _ in 0..args.repeat {
                let t0 = Instant::now();
                last = Some(cpu.generate(settings.kind, &params, w, h));
                times.push(t0.elapsed().as_secs_f64());
            }
            let device = format!("CPU twin, {} threads", rayon::current_num_threads());
            (
                last.expect("repeat >= 1"),
                median(times),
                "CPU (wall clock)",
                device,
            )
        }
    };
    write_heights(&args.out, w, h, &heights).map_err(anyhow::Error::msg)?;
    println!(
        "{} {w}x{h} on {device}: {clock} {:.3} ms, {:.1} Msamples/s{} -> {}",
        settings.kind.name(),
        seconds * 1e3,
        samples / seconds / 1e6,
        if args.repeat > 1 {
            format!(" (median of {})", args.repeat)
        } else {
            String::new()
        },
        args.out.display()
    );
    Ok(())
}

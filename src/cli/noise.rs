//! `scarp noise`: one noise kind over a grid, on the GPU or the CPU twin, timed.

use super::args::{parse_size, Backend};
use super::{check_validation, open_gpu};
use crate::noise::{CpuTables, GpuNoise, NoiseSettings, NoiseTables, DEFAULT_TABLE_SEED};
use crate::terrain::export::{check_writable, write_heights};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Args)]
pub struct NoiseArgs {
    #[command(flatten)]
    noise: NoiseSettings,
    /// Grid size, WIDTHxHEIGHT.
    #[arg(long, value_parser = parse_size)]
    size: (u32, u32),
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
        self.noise.with_kind_defaults()
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

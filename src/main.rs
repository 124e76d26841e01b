//! `scarp`: the command line. Entry point only; the work lives in the library.

use anyhow::{bail, Context as _, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use scarp::gpu::{Gpu, GpuOptions};
use scarp::noise::{
    CpuTables, GpuNoise, NoiseKind, NoiseSettings, NoiseTables, DEFAULT_TABLE_SEED,
};
use scarp::terrain::export::{check_writable, write_atomic, write_heights, write_rgba_png};
use scarp::terrain::formats::{Endian, ReadOptions};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Largest side of a generated grid.
const MAX_SIDE: u32 = 65536;
/// Most samples in one generated grid (1 GiB of f32).
const MAX_SAMPLES: u64 = 1 << 28;

#[derive(Parser)]
#[command(
    name = "scarp",
    version,
    about = "Procedural heightfield brushes on Vulkan compute",
    allow_negative_numbers = true
)]
struct Cli {
    /// Without a command, `scarp` opens the editor on the default terrain.
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Write the noise lookup tables (perm.png, grad.png: RGBA8, the exact bytes the GPU uses).
    Tables {
        /// Output folder (created if missing).
        #[arg(long)]
        out: PathBuf,
        /// Seed of the tables.
        #[arg(long, default_value_t = DEFAULT_TABLE_SEED)]
        table_seed: u64,
    },
    /// Generate a noise heightfield as .r32 (raw f32) or .png (16-bit, normalized).
    #[command(allow_negative_numbers = true)]
    Noise(Box<NoiseArgs>),
    /// Generate one image per noise kind plus a contact sheet.
    Gallery {
        /// Output folder (created if missing).
        #[arg(long, default_value = "out")]
        out: PathBuf,
        /// Side of each image in texels.
        #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(16..=8192))]
        size: u32,
        #[arg(long, value_enum, default_value_t = Backend::Gpu)]
        backend: Backend,
        #[arg(long, default_value_t = DEFAULT_TABLE_SEED)]
        table_seed: u64,
    },
    /// Replay a stroke journal headless and write the resulting heights.
    Apply(Box<ApplyArgs>),
    /// Render a terrain offscreen (the editor's pipeline, no window) to a PNG; with --frames,
    /// time frames while a brush paints.
    #[command(allow_negative_numbers = true)]
    Render(Box<RenderArgs>),
    /// Convert a height file to another format (by extension): .png (8/16-bit gray), .r16/.raw
    /// (16-bit, --endian), .r32 (f32), .exr (f32), .tif (32-bit float or 16-bit).
    #[command(allow_negative_numbers = true)]
    Convert {
        input: PathBuf,
        output: PathBuf,
        #[command(flatten)]
        read: ReadArgs,
        /// Bits per value where the output format offers a choice (png: 8 or 16, tif: 16 or 32).
        #[arg(long)]
        bits: Option<u8>,
    },
    /// Open the editor (a window): a journal or a height file, or the default 4096² terrain.
    Edit {
        /// Journal to open (replayed on load).
        file: Option<PathBuf>,
        /// Open this journal's document and paint its steps through the editor's input path.
        #[arg(long, conflicts_with = "file")]
        replay: Option<PathBuf>,
        /// Save a PNG of the window once the replay is drawn.
        #[arg(long)]
        screenshot: Option<PathBuf>,
        /// Exit after the replay and the screenshot.
        #[arg(long)]
        quit: bool,
        /// Reopen the newest untitled session that ended without saving, without asking.
        #[arg(long)]
        recover: bool,
        #[arg(long, default_value_t = DEFAULT_TABLE_SEED)]
        table_seed: u64,
    },
    /// List the Vulkan devices SCARP_GPU can select.
    Devices,
    /// Benchmarks anchored to ceilings measured in the same run: copy and FMA kernels, noise
    /// (GPU, CPU twin, the noise crate), every brush configuration, editor frames while a brush
    /// paints. Report: JSON (schema in docs/bench.md), Markdown (stdout without --md), plot.
    Bench(BenchArgs),
}

/// How to read a height file.
#[derive(Args, Clone, Debug)]
struct ReadArgs {
    /// Size of a raw height file, WxH (inferred when the file is square).
    #[arg(long, value_parser = parse_size)]
    size: Option<(u32, u32)>,
    /// Heights of the lowest and highest value of integer files (PNG, raw 16-bit, 16-bit TIFF).
    #[arg(long, value_parser = parse_range, allow_hyphen_values = true)]
    range: Option<(f32, f32)>,
    /// Byte order of raw 16-bit files.
    #[arg(long, value_enum, default_value_t = Endian::Little)]
    endian: Endian,
}

impl ReadArgs {
    fn options(&self) -> ReadOptions {
        ReadOptions {
            size: self.size,
            range: self.range.unwrap_or((0.0, 1.0)),
            endian: self.endian,
        }
    }
}

fn parse_range(s: &str) -> Result<(f32, f32), String> {
    let (lo, hi) = parse_pair(s)?;
    if lo >= hi {
        return Err(format!("'{s}': MIN must be below MAX"));
    }
    Ok((lo, hi))
}

#[derive(Args)]
struct ApplyArgs {
    /// Stroke journal (JSON, docs/journal.md).
    #[arg(long)]
    journal: PathBuf,
    /// Output height file (any format: README, Height files).
    #[arg(long)]
    out: PathBuf,
    #[arg(long, value_enum, default_value_t = Backend::Gpu)]
    backend: Backend,
    /// Instances per dispatch for pointwise brushes (1..=256).
    #[arg(long, default_value_t = scarp::brush::gpu::DEFAULT_BATCH)]
    batch: usize,
    /// Override the journal's page size (128..=2048).
    #[arg(long)]
    page_size: Option<u32>,
    /// Print every wave's GPU time (a wave = the next pass of every page, run together).
    #[arg(long)]
    passes: bool,
    /// Start from this height file instead of the journal's initial heights (any format; its
    /// size must be the document's; integer formats map onto --range, else the document's).
    #[arg(long)]
    initial: Option<PathBuf>,
    #[command(flatten)]
    read: ReadArgs,
    #[arg(long, default_value_t = DEFAULT_TABLE_SEED)]
    table_seed: u64,
}

#[derive(Args)]
struct BenchArgs {
    /// Small sizes and a reduced brush matrix (minutes on lavapipe; what CI runs).
    #[arg(long)]
    quick: bool,
    /// Write the report as JSON (schema: docs/bench.md).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write the report as Markdown tables (printed to stdout otherwise).
    #[arg(long, value_name = "FILE")]
    md: Option<PathBuf>,
    /// Write a PNG plot of brush throughput against radius with the ceilings.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Run only the measurements whose name contains NAME (repeatable). Names: noise/KIND,
    /// brush/TYPE/rRADIUS/bBATCH/pPAGE/FORMAT, frame/SIDE. Ceilings always run.
    #[arg(long, value_name = "NAME")]
    filter: Vec<String>,
    /// Timed runs per measurement, median reported [default: 5, 3 with --quick].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    repeats: Option<u32>,
    /// Untimed runs before the timed ones.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=100))]
    warmup: u32,
    /// The repository's assets folder (journals the frame benchmark replays) [default: ./assets,
    /// else the source tree's].
    #[arg(long, value_name = "DIR")]
    assets: Option<PathBuf>,
    #[arg(long, default_value_t = DEFAULT_TABLE_SEED)]
    table_seed: u64,
}

#[derive(Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["journal", "heights"])))]
struct RenderArgs {
    /// Stroke journal to replay (docs/journal.md).
    #[arg(long)]
    journal: Option<PathBuf>,
    /// A height file (.png, .r16/.raw, .r32, .exr, .tif; README, Height files) or a .scarp
    /// project.
    #[arg(long)]
    heights: Option<PathBuf>,
    #[command(flatten)]
    read: ReadArgs,
    /// Image size, WxH.
    #[arg(long, default_value = "1280x720", value_parser = parse_image_size)]
    image: (u32, u32),
    /// Camera eye and target in world units: ex,ey,ez,tx,ty,tz (x = texel column, z = texel row,
    /// y = height x vertical scale). Default: frames the whole terrain.
    #[arg(long, value_parser = parse_camera, allow_hyphen_values = true)]
    camera: Option<[f32; 6]>,
    /// Draw triangle edges only.
    #[arg(long)]
    wireframe: bool,
    /// Colour tiles by level of detail.
    #[arg(long)]
    lod_colours: bool,
    /// World y per height unit. Default: a quarter of the document's larger side (heights are
    /// in document units, brushes paint about 0..1).
    #[arg(long)]
    vertical_scale: Option<f32>,
    /// Largest screen-space geometric error of the LOD selection, pixels.
    #[arg(long, default_value_t = 2.0)]
    pixel_error: f32,
    /// Triangle budget per covered pixel (of the previous frame); 0 turns it off.
    #[arg(long, default_value_t = 2.0)]
    max_triangles_per_pixel: f32,
    /// Output PNG.
    #[arg(long)]
    out: PathBuf,
    /// Time this many frames (after 10 warm-up frames) before the final image.
    #[arg(long, default_value_t = 0)]
    frames: usize,
    /// While timing, paint a circle with a noise brush of this kind.
    #[arg(long, value_enum)]
    paint: Option<NoiseKind>,
    /// Radius of the painting brush, texels.
    #[arg(long, default_value_t = 512.0)]
    paint_radius: f32,
    /// Brush instances added per frame.
    #[arg(long, default_value_t = 4)]
    paint_rate: usize,
    /// Strength of the painting brush.
    #[arg(long, default_value_t = 0.005)]
    paint_strength: f32,
    /// GPU budget for brush work per frame, ms (default: apply everything each frame).
    #[arg(long)]
    budget_ms: Option<f64>,
    #[arg(long, default_value_t = DEFAULT_TABLE_SEED)]
    table_seed: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Backend {
    /// Vulkan compute (SCARP_GPU picks the device).
    Gpu,
    /// The CPU twin, on all cores.
    Cpu,
}

#[derive(Args)]
struct NoiseArgs {
    /// Noise function.
    #[arg(long, value_enum)]
    kind: NoiseKind,
    /// Grid size, WIDTHxHEIGHT.
    #[arg(long, value_parser = parse_size)]
    size: (u32, u32),
    /// Noise units per texel: texel (x, y) samples offset + scale * (x, y).
    #[arg(long, default_value_t = 1.0 / 256.0)]
    scale: f32,
    /// Noise-space position of texel (0, 0), X,Y.
    #[arg(long, value_parser = parse_pair, default_value = "0,0", allow_hyphen_values = true)]
    offset: (f32, f32),
    /// Noise seed; octave i uses seed + i.
    #[arg(long, default_value_t = 0)]
    seed: i32,
    /// Octaves (1..=32); ignored by perlin.
    #[arg(long, default_value_t = 10)]
    octaves: i32,
    /// Frequency ratio between octaves.
    #[arg(long, default_value_t = 1.92)]
    lacunarity: f32,
    /// Amplitude ratio between octaves.
    #[arg(long, default_value_t = 0.5)]
    gain: f32,
    /// Swiss: gradient warp (default 0.15); Jordan: warp by finer octaves (default 0.35).
    #[arg(long)]
    warp: Option<f32>,
    /// Jordan: amplitude of the second octave.
    #[arg(long, default_value_t = 0.8)]
    gain1: f32,
    /// Jordan: warp by the coarsest octave.
    #[arg(long, default_value_t = 0.4)]
    warp0: f32,
    /// Jordan: damping by the coarsest octave.
    #[arg(long, default_value_t = 1.0)]
    damp0: f32,
    /// Jordan: damping by finer octaves.
    #[arg(long, default_value_t = 0.8)]
    damp: f32,
    /// Jordan: how far damping can lower amplitudes.
    #[arg(long, default_value_t = 1.0)]
    damp_scale: f32,
    /// Erosive: feature displacement along the ridge gradient.
    #[arg(long, default_value_t = 0.15)]
    alpha: f32,
    /// Erosive: roughness near valleys.
    #[arg(long, default_value_t = 1.1)]
    beta: f32,
    /// Pre-warp amount (paper eq. 8 alpha); 0 = off.
    #[arg(long, default_value_t = 0.0)]
    prewarp_amount: f32,
    /// Pre-warp frequency (eq. 8 beta).
    #[arg(long, default_value_t = 0.5)]
    prewarp_scale: f32,
    /// Octaves of the pre-warp fBm.
    #[arg(long, default_value_t = 4)]
    prewarp_octaves: i32,
    /// T_post exponent, sign-preserving (eq. 5); 1 = off.
    #[arg(long, default_value_t = 1.0)]
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
    fn settings(&self) -> NoiseSettings {
        let defaults = NoiseSettings::new(self.kind);
        NoiseSettings {
            kind: self.kind,
            scale: self.scale,
            offset: [self.offset.0, self.offset.1],
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

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("'{s}' is not WIDTHxHEIGHT"))?;
    let side = |v: &str| -> Result<u32, String> {
        let n: u32 = v
            .trim()
            .parse()
            .map_err(|_| format!("'{v}' in '{s}' is not a whole number"))?;
        if n == 0 || n > MAX_SIDE {
            return Err(format!(
                "each side must be between 1 and {MAX_SIDE}, got {n}"
            ));
        }
        Ok(n)
    };
    let (w, h) = (side(w)?, side(h)?);
    if u64::from(w) * u64::from(h) > MAX_SAMPLES {
        return Err(format!("{w}x{h} is more than {MAX_SAMPLES} samples"));
    }
    Ok((w, h))
}

fn parse_image_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = parse_size(s)?;
    if w > 16384 || h > 16384 {
        return Err(format!("images are at most 16384x16384, got {w}x{h}"));
    }
    Ok((w, h))
}

fn parse_camera(s: &str) -> Result<[f32; 6], String> {
    let v: Vec<&str> = s.split(',').collect();
    if v.len() != 6 {
        return Err(format!("'{s}' is not ex,ey,ez,tx,ty,tz (6 numbers)"));
    }
    let mut out = [0.0; 6];
    for (o, t) in out.iter_mut().zip(&v) {
        *o = t
            .trim()
            .parse::<f32>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("'{t}' in '{s}' is not a finite number"))?;
    }
    if out[..3] == out[3..] {
        return Err("the camera's eye and target are the same point".into());
    }
    Ok(out)
}

fn parse_pair(s: &str) -> Result<(f32, f32), String> {
    let (a, b) = s
        .split_once(',')
        .ok_or_else(|| format!("'{s}' is not X,Y"))?;
    let num = |v: &str| -> Result<f32, String> {
        let x: f32 = v
            .trim()
            .parse()
            .map_err(|_| format!("'{v}' in '{s}' is not a number"))?;
        if !x.is_finite() {
            return Err(format!("'{v}' in '{s}' is not finite"));
        }
        Ok(x)
    };
    Ok((num(a)?, num(b)?))
}

fn main() {
    let cli = Cli::parse();
    let command = cli.command.unwrap_or(Command::Edit {
        file: None,
        replay: None,
        screenshot: None,
        quit: false,
        recover: false,
        table_seed: DEFAULT_TABLE_SEED,
    });
    let result = match command {
        Command::Tables { out, table_seed } => cmd_tables(&out, table_seed),
        Command::Noise(args) => cmd_noise(&args),
        Command::Gallery {
            out,
            size,
            backend,
            table_seed,
        } => cmd_gallery(&out, size, backend, table_seed),
        Command::Apply(args) => cmd_apply(&args),
        Command::Render(args) => cmd_render(&args),
        Command::Convert {
            input,
            output,
            read,
            bits,
        } => cmd_convert(&input, &output, &read, bits),
        Command::Edit {
            file,
            replay,
            screenshot,
            quit,
            recover,
            table_seed,
        } => scarp::editor::run(scarp::editor::EditOptions {
            file,
            replay,
            screenshot,
            quit,
            recover,
            table_seed,
        }),
        Command::Devices => cmd_devices(),
        Command::Bench(args) => cmd_bench(&args),
    };
    if let Err(e) = result {
        // One line: the chain of causes, outermost first.
        let msg = e
            .chain()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(": ");
        eprintln!("scarp: error: {msg}");
        std::process::exit(1);
    }
}

fn open_gpu() -> Result<std::sync::Arc<Gpu>> {
    let gpu = Gpu::new(&GpuOptions::from_env()).context("opening the GPU")?;
    Ok(gpu)
}

/// Fails if validation is on and reported anything: a CLI run is then as strict as a test.
fn check_validation(gpu: &Gpu) -> Result<()> {
    if gpu.validation_messages() > 0 {
        bail!(
            "{} validation message(s) reported (see above)",
            gpu.validation_messages()
        );
    }
    Ok(())
}

fn cmd_tables(out: &Path, table_seed: u64) -> Result<()> {
    std::fs::create_dir_all(out)
        .with_context(|| format!("{}: cannot create folder", out.display()))?;
    let tables = NoiseTables::new(table_seed);
    for (name, bytes) in [
        ("perm.png", tables.perm_bytes()),
        ("grad.png", tables.grad_bytes()),
    ] {
        let path = out.join(name);
        write_rgba_png(&path, 256, 256, bytes.to_vec()).map_err(anyhow::Error::msg)?;
        println!("{}", path.display());
    }
    Ok(())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn cmd_noise(args: &NoiseArgs) -> Result<()> {
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

fn cmd_gallery(out: &Path, size: u32, backend: Backend, table_seed: u64) -> Result<()> {
    std::fs::create_dir_all(out)
        .with_context(|| format!("{}: cannot create folder", out.display()))?;
    let tables = NoiseTables::new(table_seed);
    let cpu = CpuTables::new(&tables);
    let mut gpu_noise = match backend {
        Backend::Gpu => {
            let gpu = open_gpu()?;
            println!("device: {}", gpu.info());
            Some(GpuNoise::new(&gpu, &tables)?)
        }
        Backend::Cpu => {
            println!("device: CPU twin, {} threads", rayon::current_num_threads());
            None
        }
    };
    let mut tiles = Vec::new();
    for kind in NoiseKind::ALL {
        let settings = NoiseSettings::new(kind);
        let t0 = Instant::now();
        let heights = match gpu_noise.as_mut() {
            Some(n) => n.generate(&settings, size, size)?.heights,
            None => cpu.generate(kind, &settings.params(), size, size),
        };
        let elapsed = t0.elapsed();
        let path = out.join(format!("{}.png", kind.name()));
        write_heights(&path, size, size, &heights).map_err(anyhow::Error::msg)?;
        println!(
            "{:<8} {size}x{size} in {:>8.1} ms -> {}",
            kind.name(),
            elapsed.as_secs_f64() * 1e3,
            path.display()
        );
        tiles.push((
            kind,
            scarp::gallery::relief_tile(&heights, size, scarp::gallery::SHEET_TILE.min(size)),
        ));
    }
    if let Some(n) = &gpu_noise {
        check_validation(n.gpu())?;
    }
    let tile = scarp::gallery::SHEET_TILE.min(size);
    if tile == scarp::gallery::SHEET_TILE {
        let (w, h, rgba) = scarp::gallery::contact_sheet(&tiles);
        let path = out.join("contact_sheet.png");
        write_rgba_png(&path, w, h, rgba).map_err(anyhow::Error::msg)?;
        println!("contact sheet -> {}", path.display());
    }
    let index = out.join("index.txt");
    write_atomic(&index, |w| {
        use std::io::Write;
        for kind in NoiseKind::ALL {
            writeln!(
                w,
                "{}.png: {} with default parameters ({size}x{size})",
                kind.name(),
                kind.name()
            )
            .map_err(|e| e.to_string())?;
        }
        Ok(())
    })
    .map_err(anyhow::Error::msg)?;
    Ok(())
}

fn cmd_apply(a: &ApplyArgs) -> Result<()> {
    let (journal_path, out, backend, batch, page_size, print_passes, table_seed) = (
        a.journal.as_path(),
        a.out.as_path(),
        a.backend,
        a.batch,
        a.page_size,
        a.passes,
        a.table_seed,
    );
    let initial_file = a.initial.as_deref().map(|p| (p, &a.read));
    use scarp::brush::cpu::CpuTerrain;
    use scarp::brush::journal::{Journal, Step};
    use scarp::session::Document;

    // Everything is checked before anything runs.
    let mut journal = Journal::load(journal_path).map_err(anyhow::Error::msg)?;
    if let Some(ps) = page_size {
        journal.document.page_size = ps;
        journal
            .document
            .validate()
            .map_err(|e| anyhow::anyhow!("--page-size: {e}"))?;
    }
    if !(1..=scarp::brush::gpu::MAX_BATCH).contains(&batch) {
        bail!(
            "--batch must be between 1 and {}, got {batch}",
            scarp::brush::gpu::MAX_BATCH
        );
    }
    let doc = journal.document;
    if u64::from(doc.width) * u64::from(doc.height) > MAX_SAMPLES {
        bail!(
            "{}x{} is too large to write as one file (at most {MAX_SAMPLES} texels)",
            doc.width,
            doc.height
        );
    }
    let to_project = out.extension().is_some_and(|e| e == "scarp");
    if to_project {
        if backend != Backend::Gpu {
            bail!(
                "{}: projects are written from the GPU backend",
                out.display()
            );
        }
        scarp::terrain::export::check_folder(out).map_err(anyhow::Error::msg)?;
    } else {
        check_writable(out).map_err(anyhow::Error::msg)?;
    }
    let initial = match initial_file {
        Some((path, read)) => {
            let options = ReadOptions {
                size: Some(read.size.unwrap_or((doc.width, doc.height))),
                range: read.range.unwrap_or((doc.height_min, doc.height_max)),
                endian: read.endian,
            };
            let grid = read_with_bar(path, &options)?;
            if (grid.width, grid.height) != (doc.width, doc.height) {
                bail!(
                    "{}: {}x{} does not match the journal's {}x{} document",
                    path.display(),
                    grid.width,
                    grid.height,
                    doc.width,
                    doc.height
                );
            }
            Some(grid.values)
        }
        None => journal
            .initial_heights()
            .map_err(|e| anyhow::anyhow!("{}: {e}", journal_path.display()))?,
    };
    let flat = match journal.initial {
        scarp::brush::journal::Initial::Flat(h) => h,
        _ => 0.0,
    };
    let tables = NoiseTables::new(table_seed);
    let strokes = journal
        .steps
        .iter()
        .filter(|s| matches!(s, Step::Stroke { .. }))
        .count();
    let instances: usize = journal
        .steps
        .iter()
        .map(|s| match s {
            Step::Stroke { instances, .. } => instances.len(),
            _ => 0,
        })
        .sum();
    let t0 = Instant::now();
    let heights = match backend {
        Backend::Gpu => {
            let gpu = open_gpu()?;
            println!("device: {}", gpu.info());
            let mut terrain = match &initial {
                Some(h) => Document::from_heights(&gpu, doc, h, &tables)?,
                None => Document::new(&gpu, doc, flat, &tables)?,
            };
            terrain.set_batch(batch)?;
            let mut total_ns = 0.0;
            let mut total_passes = 0;
            journal.replay(&mut terrain, |i, t| {
                let s = t.last_stroke();
                let ns = s.gpu_ns.unwrap_or(f64::NAN);
                total_ns += ns;
                total_passes += s.passes;
                println!(
                    "step {i}: {} instances, {} page tasks, {} passes in {} waves, GPU {:.3} ms ({:.2} us/instance, {:.0} instances/s, \
                     {:.1} Mtexel/s written, {:.1} GB/s read+written)",
                    s.instances,
                    s.page_tasks,
                    s.passes,
                    s.waves,
                    ns * 1e-6,
                    ns * 1e-3 / s.instances.max(1) as f64,
                    s.instances as f64 / (ns * 1e-9),
                    s.texels_written as f64 / (ns * 1e-3),
                    s.texels_written as f64 * 8.0 / ns
                );
                if print_passes {
                    for (k, p) in s.wave_ns.iter().enumerate() {
                        println!("  wave {k}: {:.1} us", p * 1e-3);
                    }
                }
            })?;
            println!(
                "total: {strokes} strokes, {instances} instances, {total_passes} passes, GPU {:.3} ms, {} pages in memory",
                total_ns * 1e-6,
                terrain.page_count()
            );
            if to_project {
                let steps = scarp::brush::journal::recorded(&journal.steps);
                let p = scarp::session::project_of(&mut terrain, vec![], &steps)?;
                scarp::terrain::project::save(out, &p).map_err(anyhow::Error::msg)?;
                check_validation(&gpu)?;
                println!(
                    "replayed in {:.1} ms wall clock",
                    t0.elapsed().as_secs_f64() * 1e3
                );
                println!("-> {} ({} pages)", out.display(), p.pages.len());
                return Ok(());
            }
            let dense = terrain.to_dense()?;
            check_validation(&gpu)?;
            dense
        }
        Backend::Cpu => {
            let cpu = std::sync::Arc::new(CpuTables::new(&tables));
            let mut terrain = match &initial {
                Some(h) => CpuTerrain::from_heights(doc, h, cpu),
                None => CpuTerrain::new(doc, flat, cpu),
            };
            let _ = journal.replay(&mut terrain, |_, _| {});
            println!(
                "total: {strokes} strokes, {instances} instances, {} pages in memory",
                terrain.page_count()
            );
            terrain.to_dense()
        }
    };
    println!(
        "replayed in {:.1} ms wall clock",
        t0.elapsed().as_secs_f64() * 1e3
    );
    write_heights(out, doc.width, doc.height, &heights).map_err(anyhow::Error::msg)?;
    println!("-> {}", out.display());
    Ok(())
}

/// Loads the document of `scarp render`/`scarp edit`: a replayed journal or a heights file.
fn load_terrain(
    gpu: &std::sync::Arc<Gpu>,
    journal: Option<&Path>,
    heights: Option<(&Path, ReadOptions)>,
    tables: &NoiseTables,
) -> Result<scarp::session::Document> {
    use scarp::session::Document;
    if let Some(path) = journal {
        return scarp::session::replay_journal(gpu, path, tables);
    }
    let (path, options) = heights.expect("clap requires a source");
    if path.extension().is_some_and(|e| e == "scarp") {
        let p = scarp::terrain::project::load(path).map_err(anyhow::Error::msg)?;
        return scarp::session::open_project(gpu, &p, tables);
    }
    let grid = read_with_bar(path, &options)?;
    let desc = scarp::pages::geometry::DocumentDesc::for_heights(grid.width, grid.height);
    Ok(Document::from_heights(gpu, desc, &grid.values, tables)?)
}

/// A progress bar for long file work (hidden when stderr is not a terminal).
fn bar(label: &str) -> indicatif::ProgressBar {
    let b = indicatif::ProgressBar::new(1);
    b.set_style(
        indicatif::ProgressStyle::with_template("{msg} [{bar:40}] {percent}%")
            .expect("valid template"),
    );
    b.set_message(label.to_string());
    b
}

/// Reads a height file with a progress bar.
fn read_with_bar(path: &Path, options: &ReadOptions) -> Result<scarp::terrain::formats::Heights> {
    let b = bar(&format!("reading {}", path.display()));
    let r = scarp::terrain::formats::read_with_progress(path, options, &mut |done, total| {
        b.set_length(total);
        b.set_position(done);
    });
    b.finish_and_clear();
    r.map_err(anyhow::Error::msg)
}

fn cmd_convert(input: &Path, output: &Path, read: &ReadArgs, bits: Option<u8>) -> Result<()> {
    use scarp::terrain::formats::{write_with_progress, WriteOptions};
    check_writable(output).map_err(anyhow::Error::msg)?;
    if input.canonicalize().ok() == output.canonicalize().ok() && output.exists() {
        bail!("{}: input and output are the same file", output.display());
    }
    let t0 = Instant::now();
    let grid = read_with_bar(input, &read.options())?;
    let b = bar(&format!("writing {}", output.display()));
    let report = write_with_progress(
        output,
        &grid,
        &WriteOptions {
            range: read.range,
            endian: read.endian,
            bits,
        },
        &mut |done, total| {
            b.set_length(total);
            b.set_position(done);
        },
    );
    b.finish_and_clear();
    let report = report.map_err(anyhow::Error::msg)?;
    let (lo, hi) = scarp::terrain::export::min_max(&grid.values);
    println!(
        "{} -> {}: {}x{}, heights {lo}..{hi}, {:?} {}-bit{}{} in {:.1} ms",
        input.display(),
        output.display(),
        grid.width,
        grid.height,
        report.kind,
        report.bits,
        report
            .range
            .map(|(a, b)| format!(", range {a}..{b}"))
            .unwrap_or_default(),
        if report.clamped > 0 {
            format!(", {} heights clamped into the range", report.clamped)
        } else {
            String::new()
        },
        t0.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}

fn cmd_render(a: &RenderArgs) -> Result<()> {
    use scarp::render::frames::{
        default_vertical_scale, default_view, framing_camera, mean_p99, run_frames,
    };
    use scarp::render::offscreen::{offscreen_options, Offscreen};
    use scarp::render::{Camera, TerrainRenderer};
    use scarp::session::{PaintLoad, PaintLoop};

    if !(a.pixel_error.is_finite() && a.pixel_error > 0.0) {
        bail!(
            "--pixel-error must be a positive number, got {}",
            a.pixel_error
        );
    }
    if !(a.max_triangles_per_pixel.is_finite() && a.max_triangles_per_pixel >= 0.0) {
        bail!(
            "--max-triangles-per-pixel must be 0 (off) or positive, got {}",
            a.max_triangles_per_pixel
        );
    }
    if let Some(v) = a.vertical_scale {
        if !(v.is_finite() && v > 0.0) {
            bail!("--vertical-scale must be a positive number, got {v}");
        }
    }
    if a.paint.is_some() && a.frames == 0 {
        bail!("--paint needs --frames N (it paints while timing frames)");
    }
    if !(0.5..=65536.0).contains(&a.paint_radius) {
        bail!(
            "--paint-radius must be between 0.5 and 65536, got {}",
            a.paint_radius
        );
    }
    if !(1..=4096).contains(&a.paint_rate) {
        bail!(
            "--paint-rate must be between 1 and 4096, got {}",
            a.paint_rate
        );
    }
    if !(a.paint_strength.is_finite() && (0.0..=100.0).contains(&a.paint_strength)) {
        bail!(
            "--paint-strength must be between 0 and 100, got {}",
            a.paint_strength
        );
    }
    if a.budget_ms.is_some_and(|b| !(b.is_finite() && b > 0.0)) {
        bail!("--budget-ms must be a positive number");
    }
    if a.out.extension().and_then(|e| e.to_str()) != Some("png") {
        bail!("{}: --out must be a .png file", a.out.display());
    }
    check_writable(&a.out).map_err(anyhow::Error::msg)?;
    let gpu = open_gpu()?;
    println!("device: {}", gpu.info());
    let tables = NoiseTables::new(a.table_seed);
    let mut terrain = load_terrain(
        &gpu,
        a.journal.as_deref(),
        a.heights.as_deref().map(|p| (p, a.read.options())),
        &tables,
    )?;
    let desc = *terrain.desc();
    let mut renderer = TerrainRenderer::new(&gpu, desc, offscreen_options())?;
    if a.wireframe && !renderer.has_wireframe() {
        bail!(
            "{} cannot draw wireframes (no fillModeNonSolid)",
            gpu.info().name
        );
    }
    renderer.refresh(&terrain.store)?;
    let vs = a
        .vertical_scale
        .unwrap_or_else(|| default_vertical_scale(&desc));
    let camera = match a.camera {
        Some(c) => Camera::look_at(
            glam::Vec3::from_slice(&c[..3]),
            glam::Vec3::from_slice(&c[3..]),
        ),
        None => framing_camera(&renderer, &desc, vs),
    };
    let mut view = default_view(&desc, vs);
    view.wireframe = a.wireframe;
    view.lod_colours = a.lod_colours;
    view.pixel_error = a.pixel_error;
    view.max_triangles_per_pixel = a.max_triangles_per_pixel;
    let size = [a.image.0, a.image.1];
    let mut target = Offscreen::new(&gpu, size)?;
    if a.frames > 0 {
        let paint = a.paint.map(|kind| PaintLoad {
            budget_ms: a.budget_ms,
            ..PaintLoad::noise(kind, a.paint_radius, a.paint_strength, a.paint_rate)
        });
        let log = run_frames(
            &mut PaintLoop::new(&mut terrain, paint.as_ref()),
            &mut renderer,
            &mut target,
            &camera,
            &view,
            10,
            a.frames,
        )?;
        let (fm, fp) = mean_p99(&log.frame_ms);
        let (bm, bp) = mean_p99(&log.brush_gpu_ms);
        let (lm, _) = mean_p99(&log.bounds_gpu_ms);
        let (dm, dp) = mean_p99(&log.draw_gpu_ms);
        let (pm, _) = mean_p99(&log.prepare_cpu_ms);
        let (tm, _) = mean_p99(&log.triangles_per_pixel);
        let (pump, _) = mean_p99(&log.pump_ms);
        let (refresh, _) = mean_p99(&log.refresh_ms);
        println!(
            "{} frames of {}x{} at {}x{}: frame {fm:.3} ms mean, {fp:.3} ms p99 ({:.0} fps); GPU per frame: brush {bm:.3} ms (p99 {bp:.3}), tile bounds {lm:.3} ms, draw {dm:.3} ms (p99 {dp:.3}); CPU LOD selection and draw preparation {pm:.3} ms; wall: brush pump {pump:.3} ms, tile-bounds refresh {refresh:.3} ms; {tm:.2} triangles per covered pixel; {} instances painted",
            a.frames,
            desc.width,
            desc.height,
            size[0],
            size[1],
            1e3 / fm,
            log.instances_applied
        );
    }
    if a.frames == 0 && view.max_triangles_per_pixel > 0.0 {
        // The triangle budget needs a covered-pixel count: one frame measures it.
        target.render(&mut renderer, &terrain.store, &camera, &view, false, None)?;
    }
    let f = target.render(&mut renderer, &terrain.store, &camera, &view, true, None)?;
    let pixels = f.pixels.expect("read back");
    let covered = renderer.covered_pixels().unwrap_or(0);
    let s = &renderer.stats;
    println!(
        "final frame: {} tiles drawn ({} culled) in {} draws, per level {:?}, {} triangles, {:.2} triangles per covered pixel ({covered} pixels), error bound {:.2} px, draw GPU {:.3} ms",
        s.tiles_drawn,
        s.tiles_culled,
        s.draws,
        s.tiles_per_level,
        s.triangles,
        s.triangles as f64 / covered.max(1) as f64,
        s.pixel_error_used,
        f.draw_gpu_ms
    );
    write_rgba_png(&a.out, size[0], size[1], pixels).map_err(anyhow::Error::msg)?;
    check_validation(&gpu)?;
    println!("-> {}", a.out.display());
    Ok(())
}

fn cmd_bench(a: &BenchArgs) -> Result<()> {
    use scarp::bench::{self, BenchOptions};
    for (path, ext, flag) in [
        (&a.json, "json", "--json"),
        (&a.md, "md", "--md"),
        (&a.plot, "png", "--plot"),
    ] {
        if let Some(p) = path {
            if p.extension().and_then(|e| e.to_str()) != Some(ext) {
                bail!("{}: {flag} must be a .{ext} file", p.display());
            }
            scarp::terrain::export::check_folder(p).map_err(anyhow::Error::msg)?;
        }
    }
    if let Some(f) = a.filter.iter().find(|f| f.trim().is_empty()) {
        bail!("--filter {f:?}: empty name");
    }
    if a.plot.is_some()
        && !bench::names(a.quick).iter().any(|n| {
            n.starts_with("brush/")
                && (a.filter.is_empty() || a.filter.iter().any(|f| n.contains(f.as_str())))
        })
    {
        bail!("--plot draws brush results, and --filter selects none");
    }
    let assets = match &a.assets {
        Some(p) => p.clone(),
        None if Path::new("assets").is_dir() => PathBuf::from("assets"),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("assets"),
    };
    let mut options = BenchOptions::new(a.quick, assets, a.table_seed);
    options.filters = a.filter.clone();
    options.warmup = a.warmup as usize;
    if let Some(r) = a.repeats {
        options.repeats = r as usize;
    }
    let gpu = open_gpu()?;
    let report = bench::run(&gpu, &options)?;
    let md = bench::report::markdown(&report);
    let write = |p: &Path, bytes: &[u8]| -> Result<()> {
        scarp::terrain::export::write_bytes_atomic(p, bytes).map_err(anyhow::Error::msg)?;
        println!("-> {}", p.display());
        Ok(())
    };
    if let Some(p) = &a.json {
        write(p, serde_json::to_string_pretty(&report)?.as_bytes())?;
    }
    match &a.md {
        Some(p) => write(p, md.as_bytes())?,
        None => print!("{md}"),
    }
    if let Some(p) = &a.plot {
        let png = bench::plot::png(&report).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
        write(p, &png)?;
    }
    check_validation(&gpu)?;
    Ok(())
}

fn cmd_devices() -> Result<()> {
    let devices = scarp::gpu::list_devices()?;
    if devices.is_empty() {
        println!("no Vulkan devices");
    }
    for d in devices {
        let usable = match &d.usable {
            Ok(()) => "usable".to_string(),
            Err(why) => format!("unusable: {why}"),
        };
        println!(
            "{}: {} ({:?}, Vulkan {}.{}) {usable}",
            d.index,
            d.name,
            d.device_type,
            scarp::gpu::vk::api_version_major(d.api_version),
            scarp::gpu::vk::api_version_minor(d.api_version)
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CLI's documented defaults and the library's (journals use the latter) must agree.
    #[test]
    fn noise_flag_defaults_match_the_library() {
        for kind in NoiseKind::ALL {
            let cli = Cli::parse_from([
                "scarp",
                "noise",
                "--kind",
                kind.name(),
                "--size",
                "8x8",
                "--out",
                "x.r32",
            ]);
            let Some(Command::Noise(args)) = cli.command else {
                panic!("noise subcommand")
            };
            assert_eq!(args.settings(), NoiseSettings::new(kind), "{}", kind.name());
        }
    }
}

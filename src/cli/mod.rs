//! The command line: one file per command, each with its arguments (clap) and a `run` that
//! checks every flag before any work and reports errors as one line. `src/main.rs` only calls
//! [`main`]. Clap derives stay in this module: library types get their `ValueEnum` here.

mod apply;
mod args;
mod bench;
mod convert;
mod devices;
mod edit;
mod erode;
mod export;
mod gallery;
mod geology;
mod info;
mod layers;
mod noise;
mod project_input;
mod recover;
mod render;
mod tables;

use crate::gpu::{Gpu, GpuOptions};
use crate::noise::{NoiseKind, DEFAULT_TABLE_SEED};
use crate::pages::Units;
use crate::terrain::formats::{Endian, Heights, ReadOptions};
use anyhow::{bail, Context as _, Result};
use args::Backend;
use clap::builder::PossibleValue;
use clap::{Parser, Subcommand, ValueEnum};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Parser)]
#[command(
    name = "scarp",
    version,
    about = "Procedural heightfield brushes on Vulkan compute",
    allow_negative_numbers = true
)]
pub struct Cli {
    /// Without a command, `scarp` opens the editor on the default terrain.
    #[command(subcommand)]
    command: Option<Command>,
    /// Open a project whose newest save is damaged at its older intact save (refused
    /// otherwise, naming the damage).
    #[arg(long, global = true)]
    accept_older: bool,
}

#[derive(Subcommand)]
pub enum Command {
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
    Noise(Box<noise::NoiseArgs>),
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
    Apply(Box<apply::ApplyArgs>),
    /// Render a terrain offscreen (the editor's pipeline, no window) to a PNG; with --frames,
    /// time frames while a brush paints.
    #[command(allow_negative_numbers = true)]
    Render(Box<render::RenderArgs>),
    /// Convert a height file to another format (by extension): .png (8/16-bit gray), .r16/.raw
    /// (16-bit, --endian), .r32 (f32), .exr (f32), .tif (32-bit float or 16-bit).
    #[command(allow_negative_numbers = true)]
    Convert(Box<convert::ConvertArgs>),
    /// Erode a height file (or a region of it): hydraulic (virtual pipes), thermal or both, on
    /// the GPU or the CPU twin (docs/erosion.md).
    #[command(allow_negative_numbers = true)]
    Erode(Box<erode::ErodeArgs>),
    /// Stream-power erosion with uplift: rivers cut into rising rock, carving drainage networks
    /// (docs/geology.md); metres and years, coarse to fine, on the GPU or the CPU twin.
    #[command(allow_negative_numbers = true)]
    Geology(Box<geology::GeologyArgs>),
    /// Heights and material weight maps as an engine takes them — Unreal, Unity or Godot's
    /// Terrain3D — at its sizes, with what to enter in its import dialog (docs/engines.md).
    #[command(allow_negative_numbers = true)]
    Export(Box<export::ExportArgs>),
    /// Open the editor (a window): a journal, height file or project, or the default 4096²
    /// terrain.
    Edit(edit::EditArgs),
    /// List the Vulkan devices SCARP_GPU can select.
    Devices,
    /// A height file's or project's size, texel size, extent and height range in metres.
    #[command(allow_negative_numbers = true)]
    Info(Box<info::InfoArgs>),
    /// Benchmarks anchored to ceilings measured in the same run: copy and FMA kernels, noise
    /// (GPU, CPU twin, the noise crate), every brush configuration, editor frames while a brush
    /// paints. Report: JSON (schema in docs/bench.md), Markdown (stdout without --md), plot.
    Bench(bench::BenchArgs),
    /// List the journals of untitled sessions that ended without saving (a crash, a kill).
    Recover,
    /// List the layer stack a journal (or a project with its recovery journal) ends with.
    Layers {
        /// A journal (.json) or a project (.scarp).
        file: PathBuf,
    },
}

/// Parses the command line, runs the command and turns an error into one line and exit status 1.
pub fn main() {
    let cli = Cli::parse();
    crate::project::set_accept_older(cli.accept_older);
    let command = cli
        .command
        .unwrap_or(Command::Edit(edit::EditArgs::default_terrain()));
    let result = match command {
        Command::Tables { out, table_seed } => tables::run(&out, table_seed),
        Command::Noise(args) => noise::run(&args),
        Command::Gallery {
            out,
            size,
            backend,
            table_seed,
        } => gallery::run(&out, size, backend, table_seed),
        Command::Apply(args) => apply::run(&args),
        Command::Render(args) => render::run(&args),
        Command::Convert(args) => convert::run(&args),
        Command::Erode(args) => erode::run(&args),
        Command::Geology(args) => geology::run(&args),
        Command::Export(args) => export::run(&args),
        Command::Edit(args) => edit::run(args),
        Command::Devices => devices::run(),
        Command::Info(args) => info::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Layers { file } => layers::run(&file),
        Command::Recover => recover::run(),
    };
    if let Err(e) = result {
        eprintln!(
            "scarp: error: {}",
            one_line(e.chain().map(ToString::to_string))
        );
        std::process::exit(1);
    }
    for line in DEFERRED_NOTES.lock().map(|n| n.clone()).unwrap_or_default() {
        eprintln!("note: {line}");
    }
}

/// Notes said once the command has succeeded: where a file's units came from. A command that
/// fails says one line, its error.
static DEFERRED_NOTES: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

fn note_on_success(line: String) {
    if let Ok(mut notes) = DEFERRED_NOTES.lock() {
        if !notes.contains(&line) {
            notes.push(line);
        }
    }
}

/// Longest error line printed, in characters.
const MAX_ERROR_LINE: usize = 300;

/// An error chain as one line: causes outermost first, each left out when the line already
/// holds it (an OS error its file's message repeats), newlines folded, and at most
/// [`MAX_ERROR_LINE`] characters (the middle elided, so the file and the final cause stay).
fn one_line(chain: impl Iterator<Item = String>) -> String {
    let mut line = String::new();
    for cause in chain {
        let cause = cause.split_whitespace().collect::<Vec<_>>().join(" ");
        if cause.is_empty() || line.contains(&cause) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&cause);
    }
    let chars: Vec<char> = line.chars().collect();
    if chars.len() <= MAX_ERROR_LINE {
        return line;
    }
    const MARK: &str = " [...] ";
    let head_len = MAX_ERROR_LINE * 2 / 3;
    let tail_len = MAX_ERROR_LINE - head_len - MARK.len();
    let head: String = chars[..head_len].iter().collect();
    let tail: String = chars[chars.len() - tail_len..].iter().collect();
    format!("{head}{MARK}{tail}")
}

fn open_gpu() -> Result<Arc<Gpu>> {
    let gpu = Gpu::new(&GpuOptions::from_env()).context("opening the GPU")?;
    Ok(gpu)
}

/// Checks a `--trace` path before any work: a .json file in a folder that exists.
fn check_trace_path(p: &Path) -> Result<()> {
    if p.extension().and_then(|e| e.to_str()) != Some("json") {
        bail!("{}: --trace must be a .json file", p.display());
    }
    crate::atomic_file::check_folder(p).map_err(anyhow::Error::msg)
}

/// Stops the trace recording and writes it (Chrome trace-event JSON) to `p`.
fn write_trace(p: &Path) -> Result<()> {
    let events = crate::trace::stop_into(p).map_err(anyhow::Error::msg)?;
    println!(
        "trace: {events} events -> {} (open in Perfetto or chrome://tracing)",
        p.display()
    );
    Ok(())
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

/// Reads the height file a command is given, as `read`'s flags and the sidecar beside it
/// (an export's: its units and integer range) say: its heights and units.
fn read_input(path: &Path, read: &args::ReadArgs) -> Result<(Heights, Units)> {
    let (options, units, sidecar) = read.for_file(path).map_err(anyhow::Error::msg)?;
    let read = read_with_bar(path, &options, units)?;
    if let Some(s) = sidecar {
        note_on_success(format!(
            "{}: units and range from {}",
            path.display(),
            s.display()
        ));
    }
    Ok(read)
}

/// Reads a height file with a progress bar: its heights and their units, the file's
/// georeference with what the flags (and a sidecar) give, `flags` (checked), over it. Once the
/// command succeeds, a line says where the units came from, or that the file has none.
fn read_with_bar(path: &Path, options: &ReadOptions, flags: Units) -> Result<(Heights, Units)> {
    let b = bar(&format!("reading {}", path.display()));
    let r = crate::terrain::formats::read_reporting(path, options, &mut |done, total| {
        b.set_length(total);
        b.set_position(done);
    });
    b.finish_and_clear();
    let (heights, report) = r?;
    if report.voids_filled > 0 {
        eprintln!(
            "note: {}: {} nodata texel(s) filled from their neighbours",
            path.display(),
            report.voids_filled
        );
    }
    let found = report.georef.as_ref().map_or(Units::default(), |g| g.units);
    match (&report.georef, flags.is_unknown()) {
        (Some(g), true) => note_on_success(format!("{}: {}", path.display(), g.note)),
        (Some(g), false) => {
            note_on_success(format!("{}: {} (flags over it)", path.display(), g.note))
        }
        (None, true) => note_on_success(format!(
            "{}: no georeference: a texel is 1 m and a height unit a quarter of the larger \
             side (--texel-size, --height-unit set them)",
            path.display()
        )),
        (None, false) => {}
    }
    Ok((heights, found.or(flags)))
}

impl ValueEnum for NoiseKind {
    fn value_variants<'a>() -> &'a [Self] {
        &NoiseKind::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.name()))
    }
}

impl ValueEnum for Endian {
    fn value_variants<'a>() -> &'a [Self] {
        &[Endian::Little, Endian::Big]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(match self {
            Endian::Little => "little",
            Endian::Big => "big",
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_lines_say_each_cause_once_on_one_line_of_at_most_300_characters() {
        let os = "No space left on device (os error 28)".to_string();
        let chain = [format!("out.png: {os}"), os.clone()];
        assert_eq!(one_line(chain.into_iter()), format!("out.png: {os}"));
        let chain = ["a.tif: bad".to_string(), "strip 3\nof 9".to_string()];
        assert_eq!(one_line(chain.into_iter()), "a.tif: bad: strip 3 of 9");
        let long = format!("t.tif: {} the end", "x".repeat(70_000));
        let line = one_line(std::iter::once(long));
        assert!(line.chars().count() <= MAX_ERROR_LINE, "{}", line.len());
        assert!(
            line.starts_with("t.tif: xxx") && line.ends_with("xxx the end"),
            "{line}"
        );
        assert!(line.contains("[...]"));
    }
    use crate::noise::NoiseSettings;

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

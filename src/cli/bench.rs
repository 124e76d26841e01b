//! `scarp bench`: ceilings, noise, brushes and frames (docs/bench.md); `--compare` of two reports.

use super::{check_validation, open_gpu};
use crate::noise::DEFAULT_TABLE_SEED;
use anyhow::{bail, Result};
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct BenchArgs {
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
    /// Compare two reports instead of measuring: new/old per measurement with a noise band from
    /// the repeats, regressions flagged (`--md` writes the table). Same schema and device only.
    #[arg(long, num_args = 2, value_names = ["OLD.json", "NEW.json"])]
    compare: Option<Vec<PathBuf>>,
}

/// `--compare OLD NEW`: reads both reports and prints (or writes with `--md`) the comparison.
fn compare(a: &BenchArgs, files: &[PathBuf]) -> Result<()> {
    use crate::bench::{compare, Report};
    if a.quick || a.json.is_some() || a.plot.is_some() || !a.filter.is_empty() {
        bail!("--compare measures nothing: it takes only --md");
    }
    let read = |p: &PathBuf| -> Result<Report> {
        let text = crate::atomic_file::read_regular_to_string(p)
            .map_err(|e| anyhow::anyhow!("{}: cannot read: {e}", p.display()))?;
        serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{}: not a Scarp bench report: {e}", p.display()))
    };
    let (old, new) = (read(&files[0])?, read(&files[1])?);
    let c = compare::compare(&old, &new)
        .map_err(|e| anyhow::anyhow!("{} vs {}: {e}", files[0].display(), files[1].display()))?;
    let md = compare::markdown(&c);
    match &a.md {
        Some(p) => {
            crate::atomic_file::write_bytes_atomic(p, md.as_bytes()).map_err(anyhow::Error::msg)?;
            println!("-> {}", p.display());
        }
        None => print!("{md}"),
    }
    for r in c.regressions() {
        eprintln!(
            "regression: {} {:.3}x (band ±{:.1}%)",
            r.name,
            r.ratio,
            r.band * 100.0
        );
    }
    Ok(())
}

pub fn run(a: &BenchArgs) -> Result<()> {
    use crate::bench::{self, BenchOptions};
    for (path, ext, flag) in [
        (&a.json, "json", "--json"),
        (&a.md, "md", "--md"),
        (&a.plot, "png", "--plot"),
    ] {
        if let Some(p) = path {
            if p.extension().and_then(|e| e.to_str()) != Some(ext) {
                bail!("{}: {flag} must be a .{ext} file", p.display());
            }
            crate::atomic_file::check_folder(p).map_err(anyhow::Error::msg)?;
        }
    }
    if let Some(files) = &a.compare {
        return compare(a, files);
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
        crate::atomic_file::write_bytes_atomic(p, bytes).map_err(anyhow::Error::msg)?;
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

//! `scarp apply`: replays a stroke journal headless (GPU or CPU twin) and writes the heights or a
//! project, printing each stroke's cost.

use super::args::{Backend, MemoryArgs, ReadArgs, MAX_SAMPLES};
use super::{check_validation, open_gpu, read_with_bar};
use crate::atomic_file::check_folder;
use crate::brush::cpu::CpuTerrain;
use crate::brush::gpu::{StrokeStats, DEFAULT_BATCH, MAX_BATCH};
use crate::document::Document;
use crate::journal::{Initial, Journal, Step};
use crate::noise::{CpuTables, NoiseTables, DEFAULT_TABLE_SEED};
use crate::terrain::export::check_writable;
use crate::terrain::formats::ReadOptions;
use anyhow::{anyhow, bail, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Args)]
pub struct ApplyArgs {
    /// Stroke journal (JSON, docs/journal.md).
    #[arg(long)]
    journal: PathBuf,
    /// Output height file (any format: README, Height files) or a .scarp project. Documents with
    /// layers write their composite (or, with --layer, that layer's field).
    #[arg(long)]
    out: PathBuf,
    /// Write this layer's field instead of the composite (the stack after the last step).
    #[arg(long, value_name = "NAME")]
    layer: Option<String>,
    /// With --layer: which field (value, alpha, mask).
    #[arg(long, value_name = "PART", default_value = "value", requires = "layer")]
    field: String,
    #[arg(long, value_enum, default_value_t = Backend::Gpu)]
    backend: Backend,
    /// Instances per dispatch for pointwise brushes (1..=256).
    #[arg(long, default_value_t = DEFAULT_BATCH)]
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
    /// Paint the journal's steps onto this project (of the journal's document) instead of its
    /// initial heights; with --out the same project, the save appends only the pages changed.
    #[arg(long, conflicts_with = "initial")]
    onto: Option<PathBuf>,
    #[command(flatten)]
    read: ReadArgs,
    #[command(flatten)]
    memory: MemoryArgs,
    #[arg(long, default_value_t = DEFAULT_TABLE_SEED)]
    table_seed: u64,
    /// Write a timeline trace of the replay (Chrome trace-event JSON: CPU phases per thread,
    /// GPU passes on the queue's track; opens in Perfetto). GPU backend.
    #[arg(long, value_name = "FILE.json")]
    trace: Option<PathBuf>,
}

/// What a checked `scarp apply` will do.
struct Plan {
    journal: Journal,
    /// Initial heights (None: flat at `flat`).
    initial: Option<Vec<f32>>,
    flat: f32,
    to_project: bool,
}

pub fn run(a: &ApplyArgs) -> Result<()> {
    let plan = check(a)?;
    // One writer per project: the project written (also when painted onto) is held for the
    // command, after the checks and before the replay reads it.
    let _lock = lock_projects(a)?;
    let strokes = plan
        .journal
        .steps
        .iter()
        .filter(|s| matches!(s, Step::Stroke { .. }));
    let instances: usize = strokes
        .clone()
        .map(|s| match s {
            Step::Stroke { brush, samples } => {
                crate::brush::stroke::stroke_instances(brush, samples).len()
            }
            _ => 0,
        })
        .sum();
    let totals = format!("{} strokes, {instances} instances", strokes.count());
    let t0 = Instant::now();
    let heights = match a.backend {
        Backend::Gpu => match replay_gpu(a, &plan, &totals)? {
            Some(h) => h,
            None => return Ok(()), // written as a project
        },
        Backend::Cpu => replay_cpu(a, &plan, &totals),
    };
    println!(
        "replayed in {:.1} ms wall clock",
        t0.elapsed().as_secs_f64() * 1e3
    );
    let doc = plan.journal.document;
    // With the journal's units in the sidecar (and a GeoTIFF's tags), as every export has them.
    let grid = crate::terrain::formats::Heights {
        width: doc.width,
        height: doc.height,
        values: heights,
    };
    let write = crate::terrain::formats::WriteOptions::default();
    crate::terrain::export::write_with_sidecar(&a.out, &grid, &doc, (0, 0), &write, &mut |_, _| {})
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    println!("-> {}", a.out.display());
    Ok(())
}

/// Checks everything before anything runs: the journal, the flags, the output, the initial file.
fn check(a: &ApplyArgs) -> Result<Plan> {
    let journal = load_journal(a)?;
    check_replay_flags(a, &journal)?;
    let to_project = check_output(a, &journal)?;
    let initial = match &a.initial {
        Some(path) => Some(initial_file(path, &a.read, &journal)?),
        None => journal
            .initial_heights_with(crate::project::read_heights)
            .map_err(|e| anyhow!("{}: {e}", a.journal.display()))?,
    };
    let flat = match journal.initial {
        Initial::Flat(h) => h,
        Initial::File(_) | Initial::Tiles { .. } => 0.0,
    };
    Ok(Plan {
        journal,
        initial,
        flat,
        to_project,
    })
}

/// The journal, loaded onto the layers of `--onto` (none without it), with `--page-size`.
fn load_journal(a: &ApplyArgs) -> Result<Journal> {
    // Steps painted onto a layered project meet its layers.
    let start = match &a.onto {
        Some(onto) => match crate::project::open(onto)?.meta().layers {
            Some(saved) => saved
                .check()
                .map_err(|e| anyhow!("{}: layers: {e}", onto.display()))?,
            None => crate::layers::Stack::default(),
        },
        None => crate::layers::Stack::default(),
    };
    let mut journal = Journal::load_on(&a.journal, &start).map_err(anyhow::Error::msg)?;
    if let Some(ps) = a.page_size {
        journal.document.page_size = ps;
        journal
            .document
            .validate()
            .map_err(|e| anyhow!("--page-size: {e}"))?;
    }
    Ok(journal)
}

/// Checks the flags of the replay against the journal: batch, trace, backend, field and layer.
fn check_replay_flags(a: &ApplyArgs, journal: &Journal) -> Result<()> {
    if !(1..=MAX_BATCH).contains(&a.batch) {
        bail!("--batch must be between 1 and {MAX_BATCH}, got {}", a.batch);
    }
    if let Some(t) = &a.trace {
        if a.backend != Backend::Gpu {
            bail!("--trace records the GPU backend");
        }
        super::check_trace_path(t)?;
    }
    let layered = journal.steps.iter().any(|s| matches!(s, Step::Layer(_)));
    if layered && a.backend != Backend::Gpu {
        bail!("journals with layer steps replay on the GPU backend");
    }
    if crate::layers::Part::from_name(&a.field).is_none() {
        bail!("--field must be value, alpha or mask, got {:?}", a.field);
    }
    if let Some(name) = &a.layer {
        if journal.layers.index_of(name).is_none() {
            let names: Vec<&str> = journal
                .layers
                .layers
                .iter()
                .map(|l| l.name.as_str())
                .collect();
            bail!(
                "--layer: the journal ends with no layer called {name:?} (layers: {})",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            );
        }
    }
    Ok(())
}

/// Checks the output (a height file or a project) and `--onto`'s document against the journal;
/// returns whether the output is a project.
fn check_output(a: &ApplyArgs, journal: &Journal) -> Result<bool> {
    let doc = journal.document;
    let to_project = a.out.extension().is_some_and(|e| e == "scarp");
    if to_project && a.layer.is_some() {
        bail!(
            "{}: --layer writes a height file (a project holds every layer)",
            a.out.display()
        );
    }
    if !to_project && u64::from(doc.width) * u64::from(doc.height) > MAX_SAMPLES {
        bail!(
            "{}x{} is too large to write as one file (at most {MAX_SAMPLES} texels): write a \
             .scarp project, then tiles with scarp convert --tiles",
            doc.width,
            doc.height
        );
    }
    if to_project {
        if a.backend != Backend::Gpu {
            bail!(
                "{}: projects are written from the GPU backend",
                a.out.display()
            );
        }
        check_folder(&a.out).map_err(anyhow::Error::msg)?;
    } else {
        check_writable(&a.out).map_err(anyhow::Error::msg)?;
    }
    if let Some(onto) = &a.onto {
        let meta = crate::project::open(onto)?.meta();
        if meta.document != journal.document {
            bail!(
                "{}: the project's document ({}x{} {:?}, pages {}) is not the journal's",
                onto.display(),
                meta.document.width,
                meta.document.height,
                meta.document.format,
                meta.document.page_size
            );
        }
    }
    Ok(to_project)
}

/// `--initial`: a height file of the journal's document size.
fn initial_file(path: &Path, read: &ReadArgs, journal: &Journal) -> Result<Vec<f32>> {
    let doc = journal.document;
    let options = ReadOptions {
        size: Some(read.size.unwrap_or((doc.width, doc.height))),
        range: read.range.unwrap_or((doc.height_min, doc.height_max)),
        endian: read.endian,
    };
    // The journal says its document's units; the file's are not asked for.
    let (grid, _) = read_with_bar(path, &options, crate::pages::Units::default())?;
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
    Ok(grid.values)
}

/// One stroke's line (and, with --passes, its waves).
fn print_stroke(i: usize, s: &StrokeStats, passes: bool) {
    let ns = s.gpu_ns.unwrap_or(f64::NAN);
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
    if passes {
        for (k, p) in s.wave_ns.iter().enumerate() {
            println!("  wave {k}: {:.1} us", p * 1e-3);
        }
    }
}

/// Replays on the GPU; returns the heights, or None once a project has been written.
fn replay_gpu(a: &ApplyArgs, plan: &Plan, totals: &str) -> Result<Option<Vec<f32>>> {
    let t0 = Instant::now();
    let gpu = open_gpu()?;
    println!("device: {}", gpu.info());
    let tables = NoiseTables::new(a.table_seed);
    let doc = plan.journal.document;
    let budgets = a
        .memory
        .budgets(&gpu, plan.to_project.then_some(a.out.as_path()));
    let mut onto_file = None;
    let mut terrain = match (&a.onto, &plan.initial) {
        (Some(onto), _) => {
            let t0 = Instant::now();
            let (mut t, _, file) = crate::session::open_project_file(&gpu, onto, &tables)?;
            println!(
                "opened {} in {:.1} ms",
                onto.display(),
                t0.elapsed().as_secs_f64() * 1e3
            );
            t.set_budgets(budgets);
            onto_file = file;
            t
        }
        (None, Some(h)) => Document::from_heights_within(&gpu, doc, h, budgets, &tables)?,
        (None, None) => {
            let mut t = Document::new(&gpu, doc, plan.flat, &tables)?;
            t.set_budgets(budgets);
            t
        }
    };
    terrain.brushes.set_batch(a.batch)?;
    if a.trace.is_some() {
        crate::gpu::start_trace(&gpu)?;
    }
    let (mut total_ns, mut total_passes) = (0.0, 0);
    let mut tools = crate::edit::Tools::default();
    let target = &mut crate::edit::Target::new(&mut terrain, &mut tools);
    plan.journal.replay(target, |i, t| {
        let s = &t.doc.brushes.last_stroke;
        total_ns += s.gpu_ns.unwrap_or(f64::NAN);
        total_passes += s.passes;
        print_stroke(i, s, a.passes);
    })?;
    if let Some(t) = &a.trace {
        super::write_trace(t)?;
    }
    println!(
        "total: {totals}, {total_passes} passes, GPU {:.3} ms, {} pages in memory",
        total_ns * 1e-6,
        terrain.height().versions().count()
    );
    println!("{}", terrain.memory().line());
    if plan.to_project {
        let steps = Step::one_by_one(&plan.journal.steps);
        let mut meta = crate::session::meta_of(&terrain, vec![], &steps)?;
        // Painted onto a project: its presets and saved view go on with it.
        if let Some(onto) = &onto_file {
            meta.presets = onto.meta.presets.clone();
            meta.view = onto.meta.view;
        }
        let ts = Instant::now();
        let (_, saved) =
            crate::session::save_document(&mut terrain, &a.out, &meta, onto_file.as_ref(), None)?;
        println!(
            "saved in {:.1} ms: {} pages, {} written ({:.1} MiB){}",
            ts.elapsed().as_secs_f64() * 1e3,
            saved.pages,
            saved.pages_written,
            saved.bytes_written as f64 / (1u64 << 20) as f64,
            if saved.incremental {
                ", incremental"
            } else {
                ""
            }
        );
        check_validation(&gpu)?;
        println!(
            "replayed in {:.1} ms wall clock",
            t0.elapsed().as_secs_f64() * 1e3
        );
        println!(
            "-> {} ({} pages, {:.1} MiB)",
            a.out.display(),
            saved.pages,
            saved.bytes_written as f64 / (1u64 << 20) as f64
        );
        return Ok(None);
    }
    let dense = match &a.layer {
        Some(name) => {
            terrain.pump(None)?;
            let stack = terrain.layers();
            let layer = &stack.layers[stack.index_of(name).expect("checked")];
            let part = crate::layers::Part::from_name(&a.field).expect("checked");
            let field = terrain
                .store
                .field(&layer.field(part))
                .expect("a layer's fields exist");
            field.to_dense()?
        }
        None => terrain.to_dense()?,
    };
    check_validation(&gpu)?;
    Ok(Some(dense))
}

/// Replays on the CPU twin.
fn replay_cpu(a: &ApplyArgs, plan: &Plan, totals: &str) -> Vec<f32> {
    let cpu = std::sync::Arc::new(CpuTables::new(&NoiseTables::new(a.table_seed)));
    let doc = plan.journal.document;
    let mut terrain = match &plan.initial {
        Some(h) => CpuTerrain::from_heights(doc, h, cpu),
        None => CpuTerrain::new(doc, plan.flat, cpu),
    };
    let _ = plan.journal.replay(&mut terrain, |_, _| {});
    println!("total: {totals}, {} pages in memory", terrain.page_count());
    terrain.to_dense()
}

/// The write lock of the project `a` writes, if it writes one (`--out x.scarp`, also when it
/// paints `--onto` that same project).
fn lock_projects(a: &ApplyArgs) -> Result<Option<crate::project::lock::ProjectLock>> {
    use crate::project::lock::ProjectLock;
    if !a.out.extension().is_some_and(|e| e == "scarp") {
        return Ok(None);
    }
    Ok(Some(ProjectLock::acquire(&a.out, "scarp apply")?))
}

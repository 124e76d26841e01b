//! A document's life between saves, without the window: opening journals, height files and
//! projects, saving projects, and the recovery journal that lets a crashed session be replayed
//! onto its last save.

use crate::brush::gpu::GpuTerrain;
use crate::brush::journal::{journal_json, Initial, Journal, RecordedStep};
use crate::gpu::Gpu;
use crate::noise::NoiseTables;
use crate::terrain::document::DocumentDesc;
use crate::terrain::project::{self, Project, Recovery};
use anyhow::{anyhow, Context as _, Result};
use std::path::Path;
use std::sync::Arc;

/// The document of `journal` before its steps: its initial heights file (read, errors naming
/// `source`, the journal) or flat.
pub fn journal_start(
    gpu: &Arc<Gpu>,
    journal: &Journal,
    source: &Path,
    tables: &NoiseTables,
) -> Result<GpuTerrain> {
    let initial = journal
        .initial_heights()
        .map_err(|e| anyhow!("{}: {e}", source.display()))?;
    let flat = match journal.initial {
        Initial::Flat(h) => h,
        Initial::File(_) => 0.0,
    };
    Ok(match &initial {
        Some(h) => GpuTerrain::from_heights(gpu, journal.document, h, tables)?,
        None => GpuTerrain::new(gpu, journal.document, flat, tables)?,
    })
}

/// The document a journal file describes, every step replayed (`scarp render`, the benchmarks).
pub fn replay_journal(gpu: &Arc<Gpu>, path: &Path, tables: &NoiseTables) -> Result<GpuTerrain> {
    let journal = Journal::load(path).map_err(|e| anyhow!(e))?;
    let mut terrain = journal_start(gpu, &journal, path, tables)?;
    journal.replay(&mut terrain, |_, _| {})?;
    Ok(terrain)
}

/// Opens a project as a terrain (its pages uploaded as they are).
pub fn open_project(gpu: &Arc<Gpu>, p: &Project, tables: &NoiseTables) -> Result<GpuTerrain> {
    Ok(GpuTerrain::from_pages(
        gpu, p.document, p.flat, &p.pages, tables,
    )?)
}

/// The project holding `terrain`'s current heights, `presets` and the `steps` made since the
/// previous save.
pub fn project_of(
    terrain: &mut GpuTerrain,
    presets: Vec<(String, serde_json::Value)>,
    steps: &[RecordedStep],
) -> Result<Project> {
    let document = *terrain.desc();
    let journal = journal_json(&document, &Initial::Flat(terrain.flat()), steps)
        .map_err(anyhow::Error::msg)?;
    Ok(Project {
        document,
        flat: terrain.flat(),
        pages: terrain.page_heights()?,
        presets,
        journal: Some(serde_json::from_str(&journal)?),
    })
}

/// The recovery record of `steps` made since `project_path` was saved.
pub fn recovery_of(
    project_path: &Path,
    document: &DocumentDesc,
    flat: f32,
    steps: &[RecordedStep],
) -> Result<Recovery> {
    let journal =
        journal_json(document, &Initial::Flat(flat), steps).map_err(anyhow::Error::msg)?;
    Ok(Recovery {
        version: project::VERSION,
        project_checksum: project::file_checksum(project_path).map_err(anyhow::Error::msg)?,
        journal: serde_json::from_str(&journal)?,
    })
}

/// Replays a recovery record onto `terrain` (the project it belongs to, just opened); returns
/// the steps it holds.
pub fn replay_recovery(
    terrain: &mut GpuTerrain,
    recovery: &Recovery,
    base_dir: &Path,
) -> Result<Vec<RecordedStep>> {
    let journal = Journal::parse(&recovery.journal.to_string(), base_dir)
        .map_err(|e| anyhow!("recovery journal: {e}"))?;
    if journal.document != *terrain.desc() {
        return Err(anyhow!(
            "the recovery journal is for another document than the project"
        ));
    }
    journal
        .replay(terrain, |_, _| {})
        .context("replaying the recovery journal")?;
    Ok(crate::editor::recorded(&journal.steps))
}

//! `scarp edit` (and `scarp` alone): the editor window.

use super::args::MemoryArgs;
use crate::editor::EditOptions;
use crate::noise::DEFAULT_TABLE_SEED;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Default)]
pub struct EditArgs {
    /// A journal, height file or .scarp project to open (default: the default terrain).
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
    /// Record a timeline trace from the start and write it here on exit (Chrome trace-event
    /// JSON; opens in Perfetto). The profiler's record button does the same interactively.
    #[arg(long, value_name = "FILE.json")]
    trace: Option<PathBuf>,
    /// Reopen the newest untitled session that ended without saving, without asking.
    #[arg(long, conflicts_with = "replay")]
    recover: bool,
    /// Show a sea at this height (height units) from the start; the View panel sets it too.
    #[arg(long, allow_hyphen_values = true)]
    sea_level: Option<f32>,
    /// Write the interface's state after each frame, one JSON line a frame (the frame's number,
    /// the pointer as the panels saw it, the open panel, the tool, the path's points, the
    /// steps): a script driving the editor waits for a line instead of for time.
    #[arg(long, value_name = "FILE.jsonl")]
    ui_state: Option<PathBuf>,
    #[arg(long, default_value_t = DEFAULT_TABLE_SEED)]
    table_seed: u64,
    #[command(flatten)]
    memory: MemoryArgs,
}

impl EditArgs {
    /// What `scarp` without a command opens: the default terrain.
    pub fn default_terrain() -> Self {
        Self {
            table_seed: DEFAULT_TABLE_SEED,
            ..Self::default()
        }
    }
}

pub fn run(a: EditArgs) -> Result<()> {
    if let Some(t) = &a.trace {
        super::check_trace_path(t)?;
    }
    if let Some(h) = a.sea_level.filter(|h| !h.is_finite()) {
        anyhow::bail!("--sea-level must be a finite height, got {h}");
    }
    crate::editor::run(EditOptions {
        file: a.file,
        replay: a.replay,
        screenshot: a.screenshot,
        quit: a.quit,
        trace: a.trace,
        recover: a.recover,
        table_seed: a.table_seed,
        memory: a.memory.request(),
        sea_level: a.sea_level,
        ui_state: a.ui_state,
    })
}

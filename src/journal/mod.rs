//! Journals: the document's step log, a versioned JSON record of a document and the steps
//! made on it (format in docs/journal.md). One [`Step`] type is what the editor records, what
//! [`JournalFile`] writes and reads back, and what [`Journal::replay`] runs on a [`Replayer`]
//! (the GPU document or the CPU twin). [`Journal::parse`] checks every step before anything
//! runs; an error names the step and the field.
//!
//! * [`file`]: the file's serde types ([`JournalFile`]) and the steps' written forms.
//! * [`check`]: a file's steps checked in order against the layers they meet.
//! * [`replay`]: running checked steps.

mod brush_entry;
mod check;
mod file;
mod history;
mod layer_entry;
mod replay;
#[cfg(test)]
mod tests;

pub use brush_entry::{parse_brush, preset, BrushEntry};
pub use file::{
    journal_json, DocumentEntry, ErodeEntry, GeologyEntry, Initial, JournalFile, PathEntry,
    StepEntry, StrokeEntry,
};
pub use layer_entry::LayerEntry;
pub use replay::Replayer;

use file::{path_error, read_file, within_file};
pub use history::History;

use crate::brush::path::PathSpec;
use crate::brush::stroke::StrokeSample;
use crate::brush::BrushSettings;
use crate::erosion::ErosionBrush;
use crate::layers::{LayerOp, Stack};
use crate::pages::geometry::{DocumentDesc, Region};
use std::path::{Path, PathBuf};

/// The journal version this build reads and writes.
pub const JOURNAL_VERSION: u32 = 2;
/// The oldest journal version this scarp reads (version 1 has no layer steps).
pub const OLDEST_JOURNAL_VERSION: u32 = 1;
/// Most instances one stroke may produce (a guard against spacing/length bombs).
pub const MAX_STROKE_INSTANCES: usize = 10_000_000;
/// Most samples in one stroke.
pub const MAX_STROKE_SAMPLES: usize = 1_000_000;

/// Why a journal (or a brush preset) cannot be read, checked or written. Messages name the file,
/// the step and the field, as `scarp apply` prints them.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The journal file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A problem in step `step` (if it lies in one) at `field` (a JSON path such as `version`,
    /// `document.initial.flat` or `steps[2].stroke.brush.kind`; empty where the problem says it).
    #[error("{}", located(*step, field, problem))]
    Invalid {
        step: Option<usize>,
        field: String,
        problem: String,
    },
    /// The document's initial height file cannot be read.
    #[error("document.initial.file {0}")]
    InitialFile(#[source] crate::atomic_file::FileError),
    /// A problem in the journal file at `path`.
    #[error("{}: {inner}", path.display())]
    In {
        path: PathBuf,
        #[source]
        inner: Box<JournalError>,
    },
    #[error("this stamp brush's image was made in memory, not loaded from a file: it cannot be written to a journal or preset")]
    StampNotWritable,
}

impl JournalError {
    /// The step the problem lies in, if it lies in one.
    pub fn step(&self) -> Option<usize> {
        match self {
            Self::Invalid { step, .. } => *step,
            Self::In { inner, .. } => inner.step(),
            _ => None,
        }
    }

    fn at(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Self::Invalid {
            step: None,
            field: field.into(),
            problem: problem.into(),
        }
    }

    fn in_step(step: usize, problem: String) -> Self {
        Self::Invalid {
            step: Some(step),
            field: String::new(),
            problem,
        }
    }
}

/// `steps[i].field: problem`, leaving out what is not known.
fn located(step: Option<usize>, field: &str, problem: &str) -> String {
    match (step, field.is_empty()) {
        (Some(i), true) => format!("steps[{i}]: {problem}"),
        (Some(i), false) => format!("steps[{i}].{field}: {problem}"),
        (None, true) => problem.to_string(),
        (None, false) => format!("{field}: {problem}"),
    }
}

/// One step of a document's history: what the editor records, a journal file holds (its
/// written form is [`StepEntry`]) and a replay runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// A brush stroke through `samples` (its instances follow from the brush and the samples).
    Stroke {
        brush: BrushSettings,
        samples: Vec<StrokeSample>,
    },
    /// Undoes the last `n` undoable steps.
    Undo(u32),
    /// Redoes the last `n` undone steps.
    Redo(u32),
    Layer(LayerOp),
    /// An erosion run over `region` of the base (docs/erosion.md).
    Erode {
        region: Region,
        erosion: ErosionBrush,
    },
    /// A path over the base (src/brush/path.rs).
    Path(PathSpec),
    /// Stream-power erosion with uplift over `region` of the base (docs/geology.md).
    Geology {
        region: Region,
        run: crate::geology::params::GeologyRun,
    },
}

impl Step {
    /// `steps` with undo and redo counts spelled one step each, as the editor records them.
    pub fn one_by_one(steps: &[Step]) -> Vec<Step> {
        let mut out = Vec::with_capacity(steps.len());
        for s in steps {
            match s {
                Step::Undo(n) => out.extend((0..*n).map(|_| Step::Undo(1))),
                Step::Redo(n) => out.extend((0..*n).map(|_| Step::Redo(1))),
                other => out.push(other.clone()),
            }
        }
        out
    }
}

/// A checked journal.
#[derive(Clone, Debug)]
pub struct Journal {
    pub document: DocumentDesc,
    pub initial: Initial,
    pub steps: Vec<Step>,
    /// The layer stack after the last step (empty for a journal without layer steps).
    pub layers: Stack,
    /// How the editor shows the document when it opens the journal, if it says.
    pub view: Option<crate::render::saved_view::SavedView>,
}

impl Journal {
    /// Parses and checks `text`; relative initial files resolve against `base_dir`.
    pub fn parse(text: &str, base_dir: &Path) -> Result<Self, JournalError> {
        Self::parse_on(text, base_dir, &Stack::default())
    }

    fn parse_on(text: &str, base_dir: &Path, start: &Stack) -> Result<Self, JournalError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let raw: JournalFile =
            serde_path_to_error::deserialize(de).map_err(|e| path_error(e, text))?;
        Self::check_on(&raw, base_dir, start)
    }

    /// Checks a journal file; relative initial files resolve against `base_dir`.
    pub fn check(raw: &JournalFile, base_dir: &Path) -> Result<Self, JournalError> {
        Self::check_on(raw, base_dir, &Stack::default())
    }

    /// [`Self::check`] for steps that start on a document with the layers of `start` (a
    /// project's recovery journal, `scarp apply --onto`).
    pub fn check_on(
        raw: &JournalFile,
        base_dir: &Path,
        start: &Stack,
    ) -> Result<Self, JournalError> {
        check::journal(raw, base_dir, start)
    }

    /// Reads and checks the journal at `path`; errors start with the file name.
    pub fn load(path: &Path) -> Result<Self, JournalError> {
        Self::load_on(path, &Stack::default())
    }

    /// [`Self::check_on`], keeping the steps before the first one that does not check (a
    /// recovery replays what it can): the journal of those steps, and that step's error (None
    /// when every step checks). A problem outside the steps (version, document) is an error.
    pub fn check_prefix(
        raw: &JournalFile,
        base_dir: &Path,
        start: &Stack,
    ) -> Result<(Self, Option<JournalError>), JournalError> {
        match Self::check_on(raw, base_dir, start) {
            Ok(j) => Ok((j, None)),
            Err(e) => match e.step() {
                Some(k) => {
                    let mut head = raw.clone();
                    head.steps.truncate(k);
                    Ok((Self::check_on(&head, base_dir, start)?, Some(e)))
                }
                None => Err(e),
            },
        }
    }

    /// [`Self::load`] through [`Self::check_prefix`].
    pub fn load_prefix(path: &Path) -> Result<(Self, Option<JournalError>), JournalError> {
        let within = |e| within_file(path, e);
        let raw = read_file(path)?;
        let base = path.parent().unwrap_or(Path::new("."));
        let (journal, failed) =
            Self::check_prefix(&raw, base, &Stack::default()).map_err(within)?;
        Ok((journal, failed.map(within)))
    }

    /// [`Self::load`] for steps that start on a document with the layers of `start`.
    pub fn load_on(path: &Path, start: &Stack) -> Result<Self, JournalError> {
        let raw = read_file(path)?;
        let base = path.parent().unwrap_or(Path::new("."));
        Self::check_on(&raw, base, start).map_err(|e| within_file(path, e))
    }

    /// Loads the initial heights (`None` for a flat document): any height file format
    /// (`terrain::formats`), of the document's size; integer formats map onto the document's
    /// height range.
    pub fn initial_heights(&self) -> Result<Option<Vec<f32>>, JournalError> {
        self.initial_heights_with(crate::terrain::formats::read)
    }

    /// [`Self::initial_heights`], the initial file read by `read` (which may read more than
    /// height files: `project::read_heights` reads projects too).
    pub fn initial_heights_with(
        &self,
        read: impl Fn(
            &Path,
            &crate::terrain::formats::ReadOptions,
        )
            -> Result<crate::terrain::formats::Heights, crate::atomic_file::FileError>,
    ) -> Result<Option<Vec<f32>>, JournalError> {
        let d = &self.document;
        let path = match &self.initial {
            Initial::Flat(_) => return Ok(None),
            Initial::File(path) => path,
            Initial::Tiles { pattern, grid } => {
                return self.initial_tiles(pattern, *grid).map(Some)
            }
        };
        let options = crate::terrain::formats::ReadOptions {
            size: Some((d.width, d.height)),
            range: (d.height_min, d.height_max),
            ..Default::default()
        };
        read(path, &options)
            .map(|h| Some(h.values))
            .map_err(JournalError::InitialFile)
    }

    /// The document's initial heights stitched from an edge-sharing tile set.
    fn initial_tiles(
        &self,
        pattern: &Path,
        [cols, rows]: [u32; 2],
    ) -> Result<Vec<f32>, JournalError> {
        use crate::terrain::tiles;
        let d = &self.document;
        let bad = |problem: String| JournalError::at("document.initial.tiles", problem);
        let tw = tiles::tile_side(d.width, cols, "width").map_err(bad)?;
        let th = tiles::tile_side(d.height, rows, "height").map_err(bad)?;
        let options = crate::terrain::formats::ReadOptions {
            size: Some((tw, th)),
            range: (d.height_min, d.height_max),
            ..Default::default()
        };
        let stitched = tiles::read_set(pattern, cols, rows, &options).map_err(bad)?;
        Ok(stitched.grid.values)
    }
}

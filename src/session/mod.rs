//! The open document's life between saves, without the window: opening journals, height files
//! and projects ([`Session::open`]), the journal of every step made, saving projects and
//! journals, and recovery. Promise: every step reaches a file the moment it is made, titled or
//! not: a project's steps go to its recovery journal (replayed onto the project after a crash),
//! an untitled session's to a complete journal in the user's state folder ([`untitled`]). The
//! editor, the CLI and the benchmarks use this module; it knows nothing of windows.

pub mod erosion_run;
pub mod geology_run;
pub mod live_stroke;
pub mod paint_loop;
pub mod untitled;

use crate::brush::error::BrushError;
use crate::document::Document;
use crate::edit::{Target, Tools};
use crate::gpu::Gpu;
use crate::journal::{BrushEntry, Initial, Journal, JournalFile, Step};
use crate::noise::NoiseTables;
use crate::pages::geometry::DocumentDesc;
use crate::pages::{PageId, Version};
use crate::project::lock::ProjectLock;
use crate::project::v2::{PageToSave, SaveReport, SparseProject};
use crate::project::{self, Meta, Opened, Project, Recovery};
use crate::render::saved_view::SavedView;
use std::rc::Rc;

/// Why a session operation failed. Messages name the file (and for journals the step and field).
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Brush(#[from] BrushError),
    /// A height file or project that cannot be read or written.
    #[error(transparent)]
    File(#[from] crate::atomic_file::FileError),
    /// A journal that cannot be read, checked or written (the file, step and field).
    #[error(transparent)]
    Journal(#[from] crate::journal::JournalError),
    /// A recovery journal that cannot be applied.
    #[error("{0}")]
    Recovery(String),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl From<crate::gpu::GpuError> for SessionError {
    fn from(e: crate::gpu::GpuError) -> Self {
        Self::Brush(e.into())
    }
}

impl From<crate::pages::PageError> for SessionError {
    fn from(e: crate::pages::PageError) -> Self {
        Self::Brush(e.into())
    }
}

pub type Result<T, E = SessionError> = std::result::Result<T, E>;

impl SessionError {
    /// For a project refused because its newest save is damaged: what is wrong and which older
    /// save is intact (the editor asks whether to open it); None for any other error.
    pub fn older_save_offer(&self) -> Option<String> {
        match self {
            SessionError::File(f) => project::older_save_offer(f),
            _ => None,
        }
    }
}

/// `path` made absolute (journals written elsewhere still find it).
fn absolute(path: &Path) -> Result<PathBuf> {
    std::path::absolute(path).map_err(|source| SessionError::Io {
        path: path.to_path_buf(),
        source,
    })
}
pub use live_stroke::LiveStroke;
pub use paint_loop::{PaintLoad, PaintLoop};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The document of `journal` before its steps: its initial heights file (read, errors naming
/// `source`, the journal) or flat.
pub fn journal_start(
    gpu: &Arc<Gpu>,
    journal: &Journal,
    source: &Path,
    tables: &NoiseTables,
) -> Result<Document> {
    let initial = journal
        .initial_heights_with(crate::project::read_heights)
        .map_err(|e| crate::journal::JournalError::In {
            path: source.to_path_buf(),
            inner: Box::new(e),
        })?;
    let flat = match journal.initial {
        Initial::Flat(h) => h,
        Initial::File(_) | Initial::Tiles { .. } => 0.0,
    };
    Ok(match &initial {
        Some(h) => Document::from_heights(gpu, journal.document, h, tables)?,
        None => Document::new(gpu, journal.document, flat, tables)?,
    })
}

/// The journal file at `path`, checked, and its document before the steps.
pub fn open_journal(
    gpu: &Arc<Gpu>,
    path: &Path,
    tables: &NoiseTables,
) -> Result<(Journal, Document)> {
    let journal = Journal::load(path)?;
    let doc = journal_start(gpu, &journal, path, tables)?;
    Ok((journal, doc))
}

/// The document a journal file describes, every step replayed (`scarp render`, the benchmarks).
pub fn replay_journal(gpu: &Arc<Gpu>, path: &Path, tables: &NoiseTables) -> Result<Document> {
    let (journal, mut terrain) = open_journal(gpu, path, tables)?;
    journal.replay(
        &mut Target::new(&mut terrain, &mut Tools::default()),
        |_, _| {},
    )?;
    Ok(terrain)
}

/// Opens a project as a terrain (its pages uploaded as they are).
pub fn open_project(gpu: &Arc<Gpu>, p: &Project, tables: &NoiseTables) -> Result<Document> {
    Ok(Document::from_pages(
        gpu, p.document, p.flat, &p.pages, tables,
    )?)
}

/// Opens the project file at `path` as a document: version 2 lazily (pages are read when first
/// needed; the opened file is returned for incremental saves), version 1 uploaded whole.
pub fn open_project_file(
    gpu: &Arc<Gpu>,
    path: &Path,
    tables: &NoiseTables,
) -> Result<(Document, Meta, Option<SparseProject>)> {
    let opened = project::open(path)?;
    let meta = opened.meta();
    match opened {
        Opened::V1(p) => Ok((open_project(gpu, &p, tables)?, meta, None)),
        Opened::V2(sp) => {
            let coarse = sp.coarse_level();
            let mut doc = Document::from_disk(
                gpu,
                meta.document,
                meta.flat,
                sp.pages.clone(),
                coarse.as_deref(),
                tables,
            )?;
            if let Some(stack) = &meta.layers {
                let bad = |p: String| crate::atomic_file::FileError::invalid(path, p);
                let stack = stack.check().map_err(|e| bad(format!("layers: {e}")))?;
                doc.restore_layers(stack, &sp.fields)
                    .map_err(|e| bad(format!("layers: {e}")))?;
            }
            doc.restore_uplift(&sp.fields, meta.paints_uplift)
                .map_err(|e| {
                    crate::atomic_file::FileError::invalid(path, format!("uplift: {e}"))
                })?;
            doc.restore_derived(&sp.fields).map_err(|e| {
                crate::atomic_file::FileError::invalid(path, format!("rivers and wear: {e}"))
            })?;
            Ok((doc, meta, Some(sp)))
        }
    }
}

/// The project description of `terrain` with `presets` and the `steps` made since the
/// previous save.
pub fn meta_of(
    terrain: &Document,
    presets: Vec<(String, BrushEntry)>,
    steps: &[Step],
) -> Result<Meta> {
    let document = *terrain.desc();
    let journal = JournalFile::of(&document, &Initial::Flat(terrain.flat()), steps)?;
    Ok(Meta {
        document,
        flat: terrain.flat(),
        presets,
        journal: Some(journal),
        layers: terrain.is_layered().then(|| terrain.layers().to_file()),
        view: None,
        paints_uplift: false,
    })
}

/// Saves `terrain` (after its queued strokes) as a version-2 project at `path`: incrementally
/// when `previous` is the file this document was opened from or last saved to (only pages it
/// lacks are written), else as a whole new file. `fail_after` (tests) interrupts the save after
/// that many pages. The document's pages remember where their bytes now lie.
pub fn save_document(
    terrain: &mut Document,
    path: &Path,
    meta: &Meta,
    previous: Option<&SparseProject>,
    fail_after: Option<usize>,
) -> Result<(SparseProject, SaveReport)> {
    terrain.pump(None)?;
    // The base's pages are the project's; a layered document's layer fields go beside them.
    let mut meta = meta.clone();
    meta.layers = terrain.is_layered().then(|| terrain.layers().to_file());
    meta.paints_uplift = terrain.layers().paints_uplift();
    let uplift = terrain
        .store
        .field(crate::geology::UPLIFT_FIELD)
        .map(|_| crate::geology::UPLIFT_FIELD.to_string());
    let derived = crate::document::DERIVED_FIELDS
        .into_iter()
        .filter(|n| terrain.store.field(n).is_some())
        .map(String::from);
    let names: Vec<String> = std::iter::once(terrain.base_name().to_string())
        .chain(terrain.layers().field_names())
        .chain(uplift)
        .chain(derived)
        .collect();
    let coarse = match terrain
        .store
        .field_mut(&names[0])
        .expect("a document has its base")
        .coarse()?
    {
        Some(level) => Some(level.read()?),
        None => None,
    };
    let store = &terrain.store;
    let fields: Vec<&crate::pages::Field> = names
        .iter()
        .map(|n| store.field(n).expect("the stack's fields exist"))
        .collect();
    let versions: Vec<Vec<(PageId, Rc<Version>)>> = fields
        .iter()
        .map(|f| {
            f.versions()
                .by_page()
                .map(|(id, v)| (id, v.clone()))
                .collect()
        })
        .collect();
    let mut sets: Vec<Vec<PageToSave>> = fields
        .iter()
        .zip(&versions)
        .map(|(f, vs)| {
            vs.iter()
                .map(|(id, v)| PageToSave {
                    id: *id,
                    saved: f.places().saved(v).cloned(),
                })
                .collect()
        })
        .collect();
    let extra: Vec<project::v2::FieldToSave> = names[1..]
        .iter()
        .zip(&fields[1..])
        .zip(sets.drain(1..))
        .map(|((name, f), pages)| project::v2::FieldToSave {
            name: name.clone(),
            flat: f.flat(),
            pages,
        })
        .collect();
    let by_id: Vec<std::collections::HashMap<PageId, &Rc<Version>>> = versions
        .iter()
        .map(|vs| vs.iter().map(|(id, v)| (*id, v)).collect())
        .collect();
    let read = |set: usize, ids: &[PageId]| {
        let vs: Vec<&Version> = ids.iter().map(|id| &**by_id[set][id]).collect();
        fields[set].read_bytes(&vs).map_err(|e| e.to_string())
    };
    let (saved, report) = project::v2::save(
        path,
        &meta,
        &sets[0],
        &extra,
        coarse.as_deref(),
        read,
        previous,
        fail_after,
    )?;
    let located = std::iter::once(&saved.pages).chain(saved.fields.iter().map(|f| &f.pages));
    for ((name, vs), locs) in names.iter().zip(&versions).zip(located) {
        let field = terrain.store.field_mut(name).expect("saved above");
        for ((_, v), (_, loc)) in vs.iter().zip(locs) {
            field.set_saved(v, loc.clone());
        }
    }
    Ok((saved, report))
}

/// The recovery record of `steps` made since `project_path` was saved.
pub fn recovery_of(
    project_path: &Path,
    document: &DocumentDesc,
    flat: f32,
    steps: &[Step],
) -> Result<Recovery> {
    Ok(Recovery {
        version: project::RECOVERY_VERSION,
        project_checksum: project::file_checksum(project_path)?,
        journal: JournalFile::of(document, &Initial::Flat(flat), steps)?,
    })
}

/// Replays a recovery record onto `terrain` (the project it belongs to, just opened, with its
/// tools); returns the steps replayed and, when a step failed, why: the replay stops there and
/// the steps before it stay. A record that does not check (another document, a bad step) is an
/// error before any step runs.
pub fn replay_recovery(
    terrain: &mut Document,
    tools: &mut Tools,
    recovery: &Recovery,
    base_dir: &Path,
) -> Result<(Vec<Step>, Option<String>)> {
    let (journal, unchecked) = Journal::check_prefix(&recovery.journal, base_dir, terrain.layers())
        .map_err(|e| SessionError::Recovery(format!("recovery journal: {e}")))?;
    if journal.document != *terrain.desc() {
        return Err(SessionError::Recovery(
            "the recovery journal is for another document than the project".into(),
        ));
    }
    Ok(replay_prefix(
        &journal,
        unchecked,
        &mut Target::new(terrain, tools),
        "recovery journal",
    ))
}

/// Replays `journal` on `target` until a step fails: the steps replayed (undo and redo one
/// step each) and, when one failed to run or (`unchecked`) to check, why, in `name`.
fn replay_prefix(
    journal: &Journal,
    unchecked: Option<crate::journal::JournalError>,
    target: &mut Target,
    name: &str,
) -> (Vec<Step>, Option<String>) {
    let (done, failed) = journal.replay_until_error(target, |_, _| {});
    let failed = match (failed, unchecked) {
        (Some(e), _) => Some(format!("{name}: step {done} failed: {e}")),
        (None, Some(e)) => Some(format!("{name}: {e}")),
        (None, None) => None,
    };
    (Step::one_by_one(&journal.steps[..done]), failed)
}

/// What a recovery replayed: its steps, and why it stopped early (a step that failed; the file
/// holding every step is kept beside, named here).
#[derive(Debug, Default)]
pub struct Recovered {
    pub steps: usize,
    pub failed: Option<String>,
}

impl std::fmt::Display for Recovered {
    /// The status line: the steps brought back and, if one failed, why.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "recovered {} step(s)", self.steps)?;
        match &self.failed {
            Some(why) => write!(f, ", then stopped: {why}"),
            None => Ok(()),
        }
    }
}

/// `why` a recovery from the journal at `path` stopped, with `path` kept as `PATH.unapplied`
/// so the steps not replayed are not lost (None when none failed).
fn keep_unapplied(path: &Path, why: Option<String>) -> Result<Option<String>> {
    let Some(why) = why else { return Ok(None) };
    let mut kept = path.as_os_str().to_owned();
    kept.push(".unapplied");
    let kept = PathBuf::from(kept);
    std::fs::copy(path, &kept).map_err(|source| SessionError::Io {
        path: kept.clone(),
        source,
    })?;
    Ok(Some(format!(
        "{why}; every step is kept in {}",
        kept.display()
    )))
}

/// A project recovery journal found when opening a project: the steps it holds, or why it
/// cannot be applied.
pub type RecoveryOffer = (usize, Option<String>);

/// The open document, the steps made on it, and where they are saved.
pub struct Session {
    pub doc: Document,
    /// The GPU state of the edits made on `doc` (each made at its first use).
    pub tools: Tools,
    initial: Initial,
    /// Every step since the document was opened (an opened journal's own steps first).
    steps: Vec<Step>,
    /// Steps the opened file itself holds (a journal's): an untitled session starts journaling
    /// at the first step after them.
    opened_steps: usize,
    /// The project this session saves to, and how many of `steps` it holds.
    project: Option<PathBuf>,
    /// The version-2 file this document was opened from or last saved to (incremental saves).
    project_file: Option<SparseProject>,
    saved_steps: usize,
    /// How many steps the last journal saved as a user's file holds.
    journaled_steps: usize,
    /// Brush presets the opened project carried.
    presets: Vec<(String, BrushEntry)>,
    pending_recovery: Option<Recovery>,
    /// Where this untitled session journals (None: titled, or no state folder).
    untitled: Option<PathBuf>,
    /// The write lock of `project`, held while this session has it open (one writer per
    /// project).
    lock: Option<ProjectLock>,
    /// How the document is seen: as the opened project or journal saved it, then as the
    /// editor last said; written into the project on save.
    view: Option<SavedView>,
}

impl Session {
    /// Opens `source`: a project (`.scarp`), a journal (`.json`: its steps are replayed, or, with
    /// `paint_later`, returned to be painted by the caller) or a height file. Also returns the
    /// offer of a project's recovery journal, if one was found.
    pub fn open(
        gpu: &Arc<Gpu>,
        source: &Path,
        tables: &NoiseTables,
        paint_later: bool,
    ) -> Result<(Self, Vec<Step>, Option<RecoveryOffer>)> {
        let ext = source.extension().and_then(|e| e.to_str()).unwrap_or("");
        if ext == "scarp" {
            let lock = ProjectLock::acquire(source, "scarp edit")?;
            let (doc, meta, file) = open_project_file(gpu, source, tables)?;
            let (pending, offer) = match project::read_recovery(source) {
                Ok(Some(r)) => {
                    let n = r.journal.steps.len();
                    (Some(r), Some((n, None)))
                }
                Ok(None) => (None, None),
                Err(e) => (None, Some((0, Some(e.to_string())))),
            };
            let mut s = Self::new(doc, Initial::File(absolute(source)?), Vec::new());
            s.pending_recovery = pending;
            s.project = Some(source.to_path_buf());
            s.lock = Some(lock);
            s.project_file = file;
            s.presets = meta.presets;
            s.untitled = None;
            // A view out of range (a slider typed past its end) is dropped, not the project.
            s.view = meta.view.filter(|view| match view.check() {
                Ok(()) => true,
                Err(e) => {
                    eprintln!(
                        "note: {}: its saved view is not used: {e}",
                        source.display()
                    );
                    false
                }
            });
            return Ok((s, Vec::new(), offer));
        }
        if ext != "json" {
            // A height file opens as a document of its size and georeference with no steps; an
            // export comes back with what its sidecar says (units, size, integer range).
            let sidecar = crate::terrain::sidecar::beside(source)?;
            let options = crate::terrain::formats::ReadOptions {
                size: sidecar.as_ref().map(|s| (s.width, s.height)),
                range: sidecar
                    .as_ref()
                    .and_then(|s| s.range())
                    .unwrap_or((0.0, 1.0)),
                ..Default::default()
            };
            let (grid, report) =
                crate::terrain::formats::read_reporting(source, &options, &mut |_, _| {})?;
            let georef = report.georef.map(|g| g.units).unwrap_or_default();
            let desc = DocumentDesc {
                units: match &sidecar {
                    Some(s) => georef.or(s.units()),
                    None => georef,
                },
                ..DocumentDesc::for_heights(grid.width, grid.height)
            };
            let doc = Document::from_heights(gpu, desc, &grid.values, tables)?;
            let initial = Initial::File(absolute(source)?);
            return Ok((Self::new(doc, initial, Vec::new()), Vec::new(), None));
        }
        let (journal, mut doc) = open_journal(gpu, source, tables)?;
        let initial = match &journal.initial {
            Initial::File(p) => Initial::File(absolute(p)?),
            Initial::Tiles { pattern, grid } => Initial::Tiles {
                pattern: absolute(pattern)?,
                grid: *grid,
            },
            flat => flat.clone(),
        };
        if paint_later {
            let mut s = Self::new(doc, initial, Vec::new());
            s.view = journal.view;
            return Ok((s, journal.steps, None));
        }
        let mut tools = Tools::default();
        journal.replay(&mut Target::new(&mut doc, &mut tools), |_, _| {})?;
        let mut s = Self::new(doc, initial, Step::one_by_one(&journal.steps));
        s.tools = tools;
        s.view = journal.view;
        Ok((s, Vec::new(), None))
    }

    /// An untitled session of `doc`, whose opened file holds `steps`.
    fn new(doc: Document, initial: Initial, steps: Vec<Step>) -> Self {
        Self {
            doc,
            tools: Tools::default(),
            initial,
            opened_steps: steps.len(),
            steps,
            project: None,
            project_file: None,
            saved_steps: 0,
            journaled_steps: 0,
            presets: Vec::new(),
            pending_recovery: None,
            untitled: untitled::state_dir().map(|d| untitled::path_for_this_process(&d)),
            lock: None,
            view: None,
        }
    }

    /// How the document is seen, as its file saved it or the editor last set it.
    pub fn view(&self) -> Option<&SavedView> {
        self.view.as_ref()
    }

    /// The view the next save writes into the project.
    pub fn set_view(&mut self, view: SavedView) {
        self.view = Some(view);
    }

    /// Reopens an untitled session's leftover journal: its steps become this session's unsaved
    /// steps (journaled again at once, under this process), and the leftover is removed.
    ///
    /// A step that fails stops the replay: the session holds the steps before it, the leftover
    /// is kept as `NAME.unapplied` (no longer offered) and the returned message says so.
    pub fn recover_untitled(
        gpu: &Arc<Gpu>,
        path: &Path,
        tables: &NoiseTables,
    ) -> Result<(Self, Recovered)> {
        let (journal, unchecked) = Journal::load_prefix(path)?;
        let mut doc = journal_start(gpu, &journal, path, tables)?;
        let mut tools = Tools::default();
        let target = &mut Target::new(&mut doc, &mut tools);
        let name = "the untitled session's journal";
        let (steps, failed) = replay_prefix(&journal, unchecked, target, name);
        let mut s = Self::new(doc, journal.initial.clone(), steps);
        s.tools = tools;
        s.opened_steps = 0;
        s.write_recovery()?;
        let failed = keep_unapplied(path, failed)?;
        std::fs::remove_file(path).map_err(|source| SessionError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let steps = s.steps.len();
        Ok((s, Recovered { steps, failed }))
    }

    /// Every step since the document was opened.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// The project this session saves to.
    pub fn project(&self) -> Option<&Path> {
        self.project.as_deref()
    }

    /// Brush presets the opened project carried.
    pub fn presets(&self) -> &[(String, BrushEntry)] {
        &self.presets
    }

    /// Whether this is an untitled session with strokes that only its journal holds.
    pub fn untitled_with_changes(&self) -> bool {
        self.project.is_none() && self.steps.len() > self.saved_steps
    }

    /// Steps no file holds yet: since the opened file, the last project save or the last
    /// journal saved as a file of the user's.
    pub fn unsaved_steps(&self) -> usize {
        let kept = self
            .saved_steps
            .max(self.opened_steps)
            .max(self.journaled_steps);
        self.steps.len().saturating_sub(kept)
    }

    /// Writes the whole session as a journal file of the user's: its steps count as saved, and
    /// stamps in the journal's folder or below are named relative to it (they move with it).
    pub fn save_journal_as(&mut self, path: &Path) -> Result<()> {
        let mut journal = self.journal()?;
        let folder = path.parent().filter(|p| !p.as_os_str().is_empty());
        journal.stamps_relative_to(folder.unwrap_or(Path::new(".")));
        let text = journal.to_json()?;
        crate::atomic_file::write_bytes_atomic(path, text.as_bytes())?;
        self.journaled_steps = self.steps.len();
        Ok(())
    }

    /// Gives up an untitled session's steps: its journal is removed.
    pub fn discard_untitled(&mut self) {
        if let Some(u) = self.untitled.take() {
            let _ = std::fs::remove_file(u);
        }
    }

    /// Adds a step the document just took and writes it where it is kept (the project's recovery
    /// journal, or the untitled journal).
    pub fn record(&mut self, step: Step) -> Result<()> {
        self.steps.push(step);
        self.write_recovery()
    }

    /// Rewrites the project's recovery journal (steps since the save), or the untitled journal
    /// (every step) once the session made one of its own.
    fn write_recovery(&self) -> Result<()> {
        if let Some(path) = &self.project {
            let r = recovery_of(
                path,
                self.doc.desc(),
                self.doc.flat(),
                &self.steps[self.saved_steps..],
            )?;
            return Ok(project::write_recovery(path, &r)?);
        }
        let Some(path) = &self.untitled else {
            return Ok(());
        };
        if self.steps.len() == self.opened_steps {
            return Ok(());
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| SessionError::Io {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        self.save_journal(path)
    }

    /// The journal of the whole session (the opened journal's steps and every step since).
    pub fn journal(&self) -> Result<JournalFile, crate::journal::JournalError> {
        JournalFile::of(self.doc.desc(), &self.initial, &self.steps)
    }

    /// Saves the document as a project at `path` with `current` as its current brush (into the
    /// file it was opened from or last saved to: only the pages changed since); the session then
    /// belongs to that project (its untitled journal is removed).
    pub fn save_project(&mut self, path: &Path, current: BrushEntry) -> Result<SaveReport> {
        self.save_project_with(path, current, None)
    }

    /// [`Self::save_project`], interrupted after `fail_after` pages (tests of crash safety).
    #[doc(hidden)]
    pub fn save_project_with(
        &mut self,
        path: &Path,
        current: BrushEntry,
        fail_after: Option<usize>,
    ) -> Result<SaveReport> {
        if !path.extension().is_some_and(|e| e == "scarp") {
            return Err(crate::atomic_file::FileError::invalid(
                path,
                "a project file ends in .scarp",
            )
            .into());
        }
        // Saving elsewhere takes that project's lock first (and lets the old one go after).
        let lock = match &self.lock {
            Some(l) if l.project() == path => None,
            _ => Some(ProjectLock::acquire(path, "scarp edit")?),
        };
        let mut presets = self.presets.clone();
        presets.retain(|(n, _)| n != "current");
        presets.push(("current".into(), current));
        let mut meta = meta_of(&self.doc, presets, &self.steps[self.saved_steps..])?;
        meta.view = self.view;
        let (file, report) = save_document(
            &mut self.doc,
            path,
            &meta,
            self.project_file.as_ref(),
            fail_after,
        )?;
        self.project_file = Some(file);
        let _ = std::fs::remove_file(project::recovery_path(path));
        if let Some(old) = &self.project {
            if old != path {
                let _ = std::fs::remove_file(project::recovery_path(old));
            }
        }
        if let Some(u) = self.untitled.take() {
            let _ = std::fs::remove_file(u);
        }
        self.project = Some(path.to_path_buf());
        if lock.is_some() {
            self.lock = lock;
        }
        self.saved_steps = self.steps.len();
        self.presets = meta.presets;
        Ok(report)
    }

    /// Lets go of the project's write lock (the editor reopening the same project: the new
    /// session takes it); [`Self::relock`] takes it again.
    pub fn release_lock(&mut self) {
        self.lock = None;
    }

    /// Takes the project's write lock again after [`Self::release_lock`].
    pub fn relock(&mut self) -> Result<()> {
        if let (None, Some(p)) = (&self.lock, &self.project) {
            self.lock = Some(ProjectLock::acquire(p, "scarp edit")?);
        }
        Ok(())
    }

    /// Writes the whole session as a journal file.
    pub fn save_journal(&self, path: &Path) -> Result<()> {
        let text = self.journal().and_then(|j| j.to_json())?;
        Ok(crate::atomic_file::write_bytes_atomic(
            path,
            text.as_bytes(),
        )?)
    }

    /// Replays the opened project's recovery journal; returns the steps recovered. A step that
    /// fails stops the replay: the steps before it stay (and are journaled again), and the
    /// recovery file as it was is kept as `NAME.scarp.recovery.json.unapplied`.
    pub fn recover(&mut self) -> Result<Recovered> {
        let (Some(r), Some(path)) = (self.pending_recovery.take(), self.project.clone()) else {
            return Ok(Recovered::default());
        };
        let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let (steps, failed) = replay_recovery(&mut self.doc, &mut self.tools, &r, &base)?;
        let failed = keep_unapplied(&project::recovery_path(&path), failed)?;
        let n = steps.len();
        self.steps.extend(steps);
        self.write_recovery()?;
        Ok(Recovered { steps: n, failed })
    }

    /// Gives up the steps no save holds (closing without saving): an untitled session's journal
    /// or the project's recovery journal is removed.
    pub fn discard_unsaved(&mut self) {
        self.discard_untitled();
        self.discard_recovery();
    }

    /// Forgets the opened project's recovery journal and removes it.
    pub fn discard_recovery(&mut self) {
        self.pending_recovery = None;
        if let Some(path) = &self.project {
            let _ = std::fs::remove_file(project::recovery_path(path));
        }
    }
}

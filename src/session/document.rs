//! The open document: its page store and the brush engine that paints its height field. The two
//! stay apart (the engine owns kernels and queued strokes, the store owns pages); this type only
//! pairs them so that reads, undo and redo see every queued stroke first.

use crate::brush::error::{BrushError, Result};
use crate::brush::gpu::{BrushEngine, PumpReport, StrokeStats};
use crate::brush::journal::Replayer;
use crate::brush::shared::BrushInstance;
use crate::brush::BrushSettings;
use crate::gpu::Gpu;
use crate::noise::NoiseTables;
use crate::pages::disk::DiskLoc;
use crate::pages::{Budgets, DocumentDesc, Field, MemoryReport, PageId, PageStore, Version};
use std::rc::Rc;
use std::sync::Arc;

/// A document's pages and the engine painting them.
pub struct Document {
    pub store: PageStore,
    pub brushes: BrushEngine,
}

impl Document {
    fn with_height(field: Field, tables: &NoiseTables) -> Result<Self> {
        let brushes = BrushEngine::new(field.gpu(), tables)?;
        Ok(Self {
            store: PageStore::new(field),
            brushes,
        })
    }

    /// A flat document at height `flat`.
    pub fn new(
        gpu: &Arc<Gpu>,
        desc: DocumentDesc,
        flat: f32,
        tables: &NoiseTables,
    ) -> Result<Self> {
        Self::with_height(Field::new(gpu, desc, flat)?, tables)
    }

    /// A document holding `heights` (row-major, width x height).
    pub fn from_heights(
        gpu: &Arc<Gpu>,
        desc: DocumentDesc,
        heights: &[f32],
        tables: &NoiseTables,
    ) -> Result<Self> {
        Self::with_height(Field::from_heights(gpu, desc, heights)?, tables)
    }

    /// A document of flat height `flat` whose listed pages hold `pages`: the inverse of
    /// [`Self::page_heights`].
    /// [`Self::from_heights`] with its pages under `budgets` from the start.
    pub fn from_heights_within(
        gpu: &Arc<Gpu>,
        desc: DocumentDesc,
        heights: &[f32],
        budgets: Budgets,
        tables: &NoiseTables,
    ) -> Result<Self> {
        Self::with_height(
            Field::from_heights_within(gpu, desc, heights, budgets)?,
            tables,
        )
    }

    /// A document whose pages lie in a saved project, read when first needed (`coarse`: the
    /// project's coarse level, if it holds one).
    pub fn from_disk(
        gpu: &Arc<Gpu>,
        desc: DocumentDesc,
        flat: f32,
        pages: Vec<(PageId, DiskLoc)>,
        coarse: Option<&[[f32; 4]]>,
        tables: &NoiseTables,
    ) -> Result<Self> {
        Self::with_height(
            Field::from_disk(gpu, desc, flat, pages, coarse, Budgets::default())?,
            tables,
        )
    }

    pub fn from_pages(
        gpu: &Arc<Gpu>,
        desc: DocumentDesc,
        flat: f32,
        pages: &[(PageId, Vec<f32>)],
        tables: &NoiseTables,
    ) -> Result<Self> {
        Self::with_height(Field::from_pages(gpu, desc, flat, pages)?, tables)
    }

    pub fn gpu(&self) -> &Arc<Gpu> {
        self.store.gpu()
    }

    pub fn desc(&self) -> &DocumentDesc {
        self.store.height().desc()
    }

    /// The height of pages that hold no memory.
    pub fn flat(&self) -> f32 {
        self.store.height().flat()
    }

    /// The height field (committed pages and the stroke under way's working versions).
    pub fn height(&self) -> &Field {
        self.store.height()
    }

    /// What the last finished stroke cost.
    pub fn last_stroke(&self) -> &StrokeStats {
        &self.brushes.last_stroke
    }

    /// Instances per dispatch for pointwise brushes (1..=256).
    pub fn set_batch(&mut self, batch: usize) -> Result<()> {
        self.brushes.set_batch(batch)
    }

    /// See [`BrushEngine::set_in_place`].
    pub fn set_in_place(&mut self, on: bool) {
        self.brushes.set_in_place(on);
    }

    /// See [`BrushEngine::set_tile_culling`].
    pub fn set_tile_culling(&mut self, on: bool) {
        self.brushes.set_tile_culling(on);
    }

    /// Applies one stroke's instances in order, as one undo step (headless replay).
    pub fn apply_stroke(
        &mut self,
        brush: &BrushSettings,
        instances: &[BrushInstance],
    ) -> Result<()> {
        self.brushes
            .apply_stroke(self.store.height_mut(), brush, instances)
    }

    /// Queues a stroke; see [`BrushEngine::enqueue_stroke`].
    pub fn enqueue_stroke(&mut self, brush: &BrushSettings, instances: &[BrushInstance]) {
        self.brushes.enqueue_stroke(brush, instances);
    }

    /// Queues part of a live stroke; see [`BrushEngine::enqueue_stroke_part`].
    pub fn enqueue_stroke_part(
        &mut self,
        brush: &BrushSettings,
        instances: &[BrushInstance],
        join: bool,
    ) {
        self.brushes.enqueue_stroke_part(brush, instances, join);
    }

    /// Runs queued brush work under a GPU budget; see [`BrushEngine::pump`].
    pub fn pump(&mut self, budget_ms: Option<f64>) -> Result<PumpReport> {
        self.brushes.pump(self.store.height_mut(), budget_ms)
    }

    /// With frames in flight, the brush work a pump submits and the copy-on-write copies it
    /// needs are left running behind the frame the GPU draws instead of waited for
    /// ([`crate::brush::gpu::BrushEngine::set_detached`], [`Field::set_frames_in_flight`]).
    pub fn set_frames_in_flight(&mut self, on: bool) {
        self.brushes.set_detached(on);
        self.store.height_mut().set_frames_in_flight(on);
    }

    /// Sets the memory budgets of the document's pages.
    pub fn set_budgets(&mut self, budgets: Budgets) {
        self.store.height_mut().set_budgets(budgets);
    }

    /// Where the document's pages are, its budgets and its traffic.
    pub fn memory(&self) -> MemoryReport {
        self.height().memory()
    }

    /// Strokes queued or in progress.
    pub fn pending_strokes(&self) -> usize {
        self.brushes.pending_strokes()
    }

    /// Height at texel (x, y), clamped into the document, after every queued stroke.
    pub fn height_at(&mut self, x: i32, y: i32) -> Result<f32> {
        self.pump(None)?;
        Ok(self.store.height().height_at(x, y)?)
    }

    /// Undoes the last stroke (after finishing every queued one); false if there is none.
    pub fn undo(&mut self) -> Result<bool> {
        self.pump(None)?;
        Ok(self.store.height_mut().undo())
    }

    /// Redoes the last undone stroke (after finishing every queued one); false if there is none.
    pub fn redo(&mut self) -> Result<bool> {
        self.pump(None)?;
        Ok(self.store.height_mut().redo())
    }

    /// Bounds the GPU memory undo steps hold; the oldest steps are forgotten past it.
    pub fn set_undo_budget(&mut self, bytes: u64) {
        self.store.height_mut().set_undo_budget(bytes);
    }

    /// GPU memory the undo/redo steps hold (upper bound).
    pub fn undo_bytes(&self) -> u64 {
        self.height().undo_bytes()
    }

    /// Strokes that can be undone now.
    pub fn undo_steps(&self) -> usize {
        self.height().undo_steps()
    }

    /// Pages that hold GPU memory now.
    pub fn page_count(&self) -> usize {
        self.height().page_count()
    }

    /// GPU bytes of the current pages' images (history versions not included).
    pub fn page_bytes(&self) -> u64 {
        self.height().page_bytes()
    }

    /// The committed version of a page, if it holds memory (for identity checks).
    pub fn page(&self, id: PageId) -> Option<&Rc<Version>> {
        self.height().page(id)
    }

    /// The whole height field after every queued stroke, row-major.
    pub fn to_dense(&mut self) -> Result<Vec<f32>> {
        self.pump(None)?;
        Ok(self.height().to_dense()?)
    }

    /// The heights of every page that holds memory (after every queued stroke), in page order.
    pub fn page_heights(&mut self) -> Result<Vec<(PageId, Vec<f32>)>> {
        self.pump(None)?;
        Ok(self.height().page_heights()?)
    }
}

impl Replayer for Document {
    type Error = BrushError;
    fn stroke(&mut self, brush: &BrushSettings, instances: &[BrushInstance]) -> Result<()> {
        self.apply_stroke(brush, instances)
    }
    fn undo(&mut self) -> Result<bool> {
        Document::undo(self)
    }
    fn redo(&mut self) -> Result<bool> {
        Document::redo(self)
    }
}

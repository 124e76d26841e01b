//! The open document: its page store, the brush engine that paints it and its layer stack. The
//! engine and the store stay apart (the engine owns kernels and queued strokes, the store owns
//! pages); this type pairs them so that reads, undo and redo see every queued stroke first,
//! routes strokes to the selected layer's fields, keeps the document's undo log across fields
//! and keeps the composite up to date.
//!
//! A document without layers is its `height` field, painted directly. The first layer makes it
//! *layered*: the base moves to the `base` field (its undo steps with it) and `height` becomes
//! the composite, which the [`Compositor`] folds per dirty page (docs/layers.md).
//!
//! * `field_maps.rs`: the field maps (drainage, wetness, curvatures, erosion) as tint fields.
//! * `log.rs`: the undo log (which fields each step wrote an undo step in).
//! * `routing.rs`: which fields a stroke paints on the selection, and with what.

mod export_input;
mod field_maps;
mod log;
mod routing;

use crate::brush::error::{BrushError, Result};
use crate::brush::gpu::{BrushEngine, PumpReport};
use crate::brush::shared::BrushInstance;
use crate::brush::{BrushSettings, BrushType};
use crate::geology::{UPLIFT_FIELD, UPLIFT_UNPAINTED};
use crate::gpu::Gpu;
use crate::layers::composite::f32_desc;
use crate::layers::{CompositeStats, Compositor, LayerFiles, LayerOp, Part, Stack, BASE_FIELD};
use crate::noise::NoiseTables;
use crate::pages::disk::DiskLoc;
use crate::pages::{Budgets, DocumentDesc, Field, MemoryReport, PageId, PageStore, HEIGHT};
use crate::rivers::{NO_WATER, RIVERS_FIELD};
use log::{LogEntry, UndoLog};
use routing::Routing;
use std::path::Path;
use std::sync::Arc;

/// Fields a document's edits make beside the heights, saved with the project: the rivers'
/// water and erosion's wear and deposits.
pub const DERIVED_FIELDS: [&str; 3] = [
    RIVERS_FIELD,
    crate::wear::WEAR_FIELD,
    crate::wear::DEPOSITS_FIELD,
];

/// A document's pages, the engine painting them and its layers.
pub struct Document {
    pub store: PageStore,
    pub brushes: BrushEngine,
    layers: Stack,
    compositor: Option<Compositor>,
    log: UndoLog,
    /// What the stroke under way takes from the composite.
    routing: Routing,
    /// Composite work since the last [`Self::take_composite_stats`].
    composite_stats: CompositeStats,
    /// Undo memory each field may hold (new layer fields get it too).
    undo_budget: u64,
    /// Solo view: only the selected layer folded onto the base (not a step).
    solo: bool,
    /// See [`Self::set_frames_in_flight`] (fields made later follow it too).
    frames_in_flight: bool,
}

impl Document {
    fn with_height(field: Field, tables: &NoiseTables) -> Result<Self> {
        let brushes = BrushEngine::new(field.gpu(), tables)?;
        Ok(Self {
            store: PageStore::new(field),
            brushes,
            layers: Stack::default(),
            compositor: None,
            log: UndoLog::default(),
            routing: Routing::default(),
            composite_stats: CompositeStats::default(),
            undo_budget: crate::pages::history::DEFAULT_UNDO_BUDGET,
            solo: false,
            frames_in_flight: false,
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
        Self::with_height(
            Field::from_heights(gpu, desc, heights, Budgets::default())?,
            tables,
        )
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
        Self::with_height(Field::from_heights(gpu, desc, heights, budgets)?, tables)
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

    /// The base height of pages that hold no memory.
    pub fn flat(&self) -> f32 {
        self.base().flat()
    }

    /// The height field (committed pages and the stroke under way's working versions).
    pub fn height(&self) -> &Field {
        self.store.height()
    }

    /// Applies one stroke's instances in order, as one undo step (headless replay).
    pub fn apply_stroke(
        &mut self,
        brush: &BrushSettings,
        instances: &[BrushInstance],
    ) -> Result<()> {
        self.enqueue_stroke_part(brush, instances, false)?;
        self.pump(None).map(|_| ())
    }

    /// Queues part of a stroke on the selected layer (or the base): with `join` it continues the
    /// stroke queued before (same undo step). A layer's value is painted as a document is; on
    /// `max`, `min` and `replace` layers each instance also raises alpha toward 1 by its falloff;
    /// `mask` paints the mask toward the brush's value, `erase` lowers alpha (and an `add`
    /// layer's value) toward 0. Refused (nothing queued) on a locked layer, and for `mask` and
    /// `erase` on the base. See [`BrushEngine::enqueue`].
    pub fn enqueue_stroke_part(
        &mut self,
        brush: &BrushSettings,
        instances: &[BrushInstance],
        join: bool,
    ) -> Result<()> {
        self.check_stroke(brush)?;
        if brush.brush == BrushType::Erode {
            return Err(BrushError::Layer(
                "the erode brush is an edit (edit::stroke::enqueue), not a painted stroke".into(),
            ));
        }
        let layered = self.is_layered() && !self.layers.paints_uplift();
        if !join && brush.brush == BrushType::Level && layered {
            // Level strokes pull toward the composite under their first sample, before them.
            self.routing.level_target = match crate::brush::level_texel(instances) {
                Some((x, y)) => self.height_at(x, y)?,
                None => 0.0,
            };
        }
        if !join && brush.brush.is_plane() && layered {
            // Flatten and ramp pull toward the plane through the composite, before them.
            self.routing.plane =
                crate::brush::Plane::of_stroke(brush, instances, |x, y| self.height_at(x, y))?;
        }
        if let (false, BrushType::Mask, Some(rules)) = (join, brush.brush, &brush.rules) {
            // The rules read the height below the layer as it is when the stroke starts: after
            // every stroke queued before it.
            self.pump(None)?;
            let i = self
                .layers
                .selected_index()
                .expect("checked: mask strokes paint layers");
            let c = self.compositor.as_mut().expect("a layer is selected");
            c.rules_weight(&mut self.store, &self.layers, i, rules)?;
        }
        let orders = self.routing.orders(
            &self.layers,
            layered,
            self.base_name(),
            brush,
            instances,
            join,
        );
        if !join {
            let fields = orders.iter().map(|o| o.field.clone()).collect();
            self.log.push(LogEntry::Fields(fields));
        }
        for o in orders {
            self.brushes.enqueue(o);
        }
        Ok(())
    }

    /// Why a stroke of `brush` cannot be painted on the current selection, if it cannot.
    pub fn check_stroke(&self, brush: &BrushSettings) -> Result<()> {
        let layer_only = matches!(brush.brush, BrushType::Mask | BrushType::Erase);
        let uplift = self.layers.paints_uplift();
        match self.layers.selected_layer() {
            None if uplift && brush.rules.is_some() => Err(BrushError::Layer(
                "mask rules filter a layer's mask: turn them off to paint the uplift map".into(),
            )),
            None if layer_only && !uplift => Err(BrushError::Layer(format!(
                "{} brushes paint layers: select a layer (the {} is selected)",
                brush.brush.name(),
                self.layers.selected_name()
            ))),
            Some(l) if l.locked => Err(BrushError::Layer(format!(
                "layer {:?} is locked: unlock it to paint",
                l.name
            ))),
            _ => Ok(()),
        }
    }

    /// Begins an undo step of an edit that writes these fields itself (an undo step each, begun
    /// by its writes): undo and redo then move them together.
    pub(crate) fn begin_step(&mut self, fields: Vec<String>) {
        self.log.push(LogEntry::Fields(fields));
    }

    /// The base's values over `rect` (inside the document), row-major, after every queued
    /// stroke.
    pub fn base_rect(&mut self, rect: crate::pages::geometry::Rect) -> Result<Vec<f32>> {
        self.pump(None)?;
        Ok(crate::pages::rects::read(self.base(), rect)?)
    }

    /// Writes `values` (row-major over `rect`) into the base as one undo step, or with `join`
    /// as part of the last one (which this call or another of it began); the composite follows.
    pub fn write_base_rect(
        &mut self,
        rect: crate::pages::geometry::Rect,
        values: &[f32],
        join: bool,
    ) -> Result<()> {
        let name = self.base_name();
        if !join {
            self.log.push(LogEntry::Fields(vec![name.to_string()]));
        }
        let field = self.store.field_mut(name).expect("the base exists");
        crate::pages::rects::write(field, rect, values, join)?;
        self.composite()
    }

    /// Ends a live edit of `rect` of the base (a region run shown as it goes): writes `heights`
    /// as the last part of its undo step (joined to the view's writes where `joined`). Where
    /// the heights could not be had, or the write fails, the edit's undo step is taken back for
    /// good, so the document stays as its journal says.
    pub fn end_live_write(
        &mut self,
        rect: crate::pages::geometry::Rect,
        heights: Result<Vec<f32>>,
        joined: bool,
    ) -> Result<()> {
        let heights = match heights {
            Ok(h) => h,
            Err(e) => {
                if joined {
                    self.take_back()?;
                }
                return Err(e);
            }
        };
        if let Err(e) = self.write_base_rect(rect, &heights, joined) {
            // The write left an undo step (begun here or by the view): take it back.
            self.take_back()?;
            return Err(e);
        }
        Ok(())
    }

    /// Runs queued brush work under a GPU budget (see [`BrushEngine::pump`]), then brings the
    /// composite up to date with what it painted.
    pub fn pump(&mut self, budget_ms: Option<f64>) -> Result<PumpReport> {
        let report = self.brushes.pump(&mut self.store, budget_ms)?;
        if report.pending_strokes == 0 {
            self.log.trim(&self.store);
        }
        self.composite()?;
        Ok(report)
    }

    /// Brings the composite up to date (layered documents).
    pub(crate) fn composite(&mut self) -> Result<()> {
        if let Some(c) = &mut self.compositor {
            let shown = if self.solo {
                self.layers.solo_view()
            } else {
                self.layers.clone()
            };
            let stats = c.update(&mut self.store, &shown)?;
            self.composite_stats.pages += stats.pages;
            self.composite_stats.cache_pages += stats.cache_pages;
            self.composite_stats.blends += stats.blends;
            self.composite_stats.gpu_ns += stats.gpu_ns;
        }
        Ok(())
    }

    /// Composite work done since the last call.
    pub fn take_composite_stats(&mut self) -> CompositeStats {
        std::mem::take(&mut self.composite_stats)
    }

    /// Whether the document has (or had) layers: `height` is then the composite.
    pub fn is_layered(&self) -> bool {
        self.compositor.is_some()
    }

    /// The field holding the base: `height` until the document has layers, then `base`.
    pub fn base_name(&self) -> &'static str {
        if self.is_layered() {
            BASE_FIELD
        } else {
            HEIGHT
        }
    }

    /// The base height field.
    pub fn base(&self) -> &Field {
        self.store
            .field(self.base_name())
            .expect("a document has its base")
    }

    /// The layer stack.
    pub fn layers(&self) -> &Stack {
        &self.layers
    }

    /// Gives a document just opened from a project its stack and the layers' stored fields
    /// (read when first needed); the composite follows. Every field the stack names must be
    /// stored.
    pub fn restore_layers(
        &mut self,
        stack: Stack,
        stored: &[crate::project::v2::StoredField],
    ) -> Result<()> {
        self.make_layered()?;
        for l in &stack.layers {
            for part in Part::ALL {
                let name = l.field(part);
                let f = stored.iter().find(|f| f.name == name).ok_or_else(|| {
                    BrushError::Layer(format!("layer {:?}: field {name} is not stored", l.name))
                })?;
                let field = self.stored_field(f)?;
                self.store.insert_field(&name, field)?;
            }
        }
        self.layers = stack;
        self.composite()
    }

    /// Makes the uplift map ([`UPLIFT_FIELD`]), unpainted, if the document has none.
    fn ensure_uplift(&mut self) -> Result<()> {
        self.ensure_field(UPLIFT_FIELD, UPLIFT_UNPAINTED)
    }

    /// Makes the r32f field `name`, `flat` everywhere, if the document has none.
    fn ensure_field(&mut self, name: &str, flat: f32) -> Result<()> {
        if self.store.field(name).is_some() {
            return Ok(());
        }
        let mut field = Field::new(self.gpu(), f32_desc(self.desc()), flat)?;
        field.set_budgets(self.base().places().budgets().clone());
        let field = self.adopted(field);
        self.store.insert_field(name, field)?;
        Ok(())
    }

    /// Writes a path's result as one undo step: `heights` over `rect` of the base and, where
    /// it holds water, `water` (surfaces, [`NO_WATER`] where none) into the rivers field
    /// ([`RIVERS_FIELD`], made at the first river): the higher of the water there and the new,
    /// written only on the pages where it rises (a river across a large box leaves the pages
    /// it does not reach as they are). A failed write takes the step back.
    pub fn write_path_rect(
        &mut self,
        rect: crate::pages::geometry::Rect,
        heights: &[f32],
        water: Option<&[f32]>,
    ) -> Result<()> {
        let rises = match water {
            Some(w) => self.rising_water(rect, w)?,
            None => Vec::new(),
        };
        if rises.is_empty() {
            return self.write_base_rect(rect, heights, false);
        }
        self.ensure_field(RIVERS_FIELD, NO_WATER)?;
        let name = self.base_name().to_string();
        self.log.push(LogEntry::Fields(vec![
            name.clone(),
            RIVERS_FIELD.to_string(),
        ]));
        let mut write = || -> Result<()> {
            let base = self.store.field_mut(&name).expect("the base exists");
            crate::pages::rects::write(base, rect, heights, false)?;
            let rivers = self.store.field_mut(RIVERS_FIELD).expect("made above");
            for (i, (part, values)) in rises.iter().enumerate() {
                crate::pages::rects::write(rivers, *part, values, i > 0)?;
            }
            Ok(())
        };
        if let Err(e) = write() {
            self.take_back()?;
            return Err(e);
        }
        self.composite()
    }

    /// The parts of `rect` (one per page) where the surfaces `water` (row-major over `rect`)
    /// rise above the rivers' water there, with the higher of the two over each part.
    fn rising_water(
        &mut self,
        rect: crate::pages::geometry::Rect,
        water: &[f32],
    ) -> Result<Vec<(crate::pages::geometry::Rect, Vec<f32>)>> {
        self.pump(None)?;
        let d = *self.desc();
        let mut parts = Vec::new();
        for id in d.page_ids() {
            let part = d.page_rect(id).intersect(&rect);
            if part.is_empty() {
                continue;
            }
            let old = match self.store.field(RIVERS_FIELD) {
                Some(f) => crate::pages::rects::read(f, part)?,
                None => vec![NO_WATER; part.texels() as usize],
            };
            let w = rect.width() as usize;
            let mut rose = false;
            let mut values = old;
            for (i, v) in values.iter_mut().enumerate() {
                let (x, y) = (i % part.width() as usize, i / part.width() as usize);
                let at = (part.y0 - rect.y0) as usize + y;
                let new = water[at * w + (part.x0 - rect.x0) as usize + x];
                if new > *v {
                    *v = new;
                    rose = true;
                }
            }
            if rose {
                parts.push((part, values));
            }
        }
        Ok(parts)
    }

    /// Gives a document just opened from a project the fields its edits made that it stored:
    /// the rivers' water, erosion's wear and deposits ([`DERIVED_FIELDS`]), each read when
    /// first needed.
    pub fn restore_derived(&mut self, stored: &[crate::project::v2::StoredField]) -> Result<()> {
        for name in DERIVED_FIELDS {
            if let Some(f) = stored.iter().find(|f| f.name == name) {
                let field = self.stored_field(f)?;
                self.store.insert_field(name, field)?;
            }
        }
        Ok(())
    }

    /// Adds what an erosion of `rect` did, from the base's heights `before` to `after`
    /// (row-major over `rect`), to the wear and deposits fields ([`crate::wear`], made at the
    /// first run), as part of the undo step the heights' write made (the last one). A failed
    /// read or write takes that step back.
    pub fn add_wear(
        &mut self,
        rect: crate::pages::geometry::Rect,
        before: &[f32],
        after: &[f32],
    ) -> Result<()> {
        let unit = self.desc().height_unit() as f32;
        let unchanged = |(&b, &a): (&f32, &f32)| crate::wear::change(b, a, unit) == (0.0, 0.0);
        if before.iter().zip(after).all(unchanged) {
            return Ok(());
        }
        let added = (|| {
            self.ensure_wear_fields()?;
            let mut sums = self.wear_sums(rect)?;
            crate::wear::add_changes(&mut sums, rect, rect, before, after, unit);
            self.write_wear_sums(rect, &sums, false)
        })();
        if let Err(e) = added {
            self.take_back()?;
            return Err(e);
        }
        Ok(())
    }

    /// Makes erosion's wear and deposits fields ([`crate::wear`], 0 everywhere) where the
    /// document has none yet: an erosion stroke writes them beside the heights.
    pub(crate) fn ensure_wear_fields(&mut self) -> Result<()> {
        self.ensure_field(crate::wear::WEAR_FIELD, 0.0)?;
        self.ensure_field(crate::wear::DEPOSITS_FIELD, 0.0)
    }

    /// Names `fields` in the last undo step: they began a version step of it after it began.
    pub(crate) fn name_in_step(&mut self, fields: &[&str]) {
        self.log.extend_last(fields);
    }

    /// Erosion's wear and deposits over `rect` (the fields [`Self::ensure_wear_fields`] made),
    /// row-major: what a region run or a stroke through the host adds to.
    pub(crate) fn wear_sums(
        &mut self,
        rect: crate::pages::geometry::Rect,
    ) -> Result<[Vec<f32>; 2]> {
        use crate::wear::{DEPOSITS_FIELD, WEAR_FIELD};
        let _p = crate::profile::scope("erosion: wear");
        let read = |name: &str| -> Result<Vec<f32>> {
            let field = self.store.field(name).expect("ensure_wear_fields made it");
            Ok(crate::pages::rects::read(field, rect)?)
        };
        Ok([read(WEAR_FIELD)?, read(DEPOSITS_FIELD)?])
    }

    /// Writes erosion's wear and deposits `sums` over `rect` (row-major). Each field's write
    /// begins a version step of it, named in the last undo step, or with `join` is part of the
    /// one it began.
    pub(crate) fn write_wear_sums(
        &mut self,
        rect: crate::pages::geometry::Rect,
        sums: &[Vec<f32>; 2],
        join: bool,
    ) -> Result<()> {
        use crate::wear::{DEPOSITS_FIELD, WEAR_FIELD};
        let _p = crate::profile::scope("erosion: wear");
        for (name, sum) in [(WEAR_FIELD, &sums[0]), (DEPOSITS_FIELD, &sums[1])] {
            let field = self
                .store
                .field_mut(name)
                .expect("ensure_wear_fields made it");
            let wrote = crate::pages::rects::write(field, rect, sum, join);
            // A write, whole or not, is a version step of the field: the step names it.
            if !join {
                self.log.extend_last(&[name]);
            }
            wrote?;
        }
        Ok(())
    }

    /// Erosion's wear (`deposits`: its deposits) over `rect`, metres, row-major, after every
    /// queued stroke; None where no erosion has run.
    pub fn wear_rect(
        &mut self,
        rect: crate::pages::geometry::Rect,
        deposits: bool,
    ) -> Result<Option<Vec<f32>>> {
        let name = match deposits {
            true => crate::wear::DEPOSITS_FIELD,
            false => crate::wear::WEAR_FIELD,
        };
        self.field_rect(name, rect)
    }

    /// The rivers' water surfaces over `rect` (inside the document), row-major, after every
    /// queued stroke; None where the document holds no water.
    pub fn rivers_rect(&mut self, rect: crate::pages::geometry::Rect) -> Result<Option<Vec<f32>>> {
        self.field_rect(RIVERS_FIELD, rect)
    }

    /// Field `name` over `rect` (inside the document), row-major, after every queued stroke;
    /// None where the document has no such field.
    fn field_rect(
        &mut self,
        name: &str,
        rect: crate::pages::geometry::Rect,
    ) -> Result<Option<Vec<f32>>> {
        self.pump(None)?;
        match self.store.field(name) {
            Some(f) => Ok(Some(crate::pages::rects::read(f, rect)?)),
            None => Ok(None),
        }
    }

    /// `field` set up as the document's fields are: its undo budget and frames in flight.
    fn adopted(&self, mut field: Field) -> Field {
        field.set_undo_budget(self.undo_budget);
        field.set_frames_in_flight(self.frames_in_flight);
        field
    }

    /// The r32f field a project stored (`f`: a layer's part, the uplift map or the rivers),
    /// its pages read when first needed, under the base's budgets.
    fn stored_field(&self, f: &crate::project::v2::StoredField) -> Result<Field> {
        let field = Field::from_disk(
            self.gpu(),
            f32_desc(self.desc()),
            f.flat,
            f.pages.clone(),
            None,
            self.base().places().budgets().clone(),
        )?;
        Ok(self.adopted(field))
    }

    /// Gives a document just opened from a project the uplift map it stored, if it stored one
    /// (read when first needed), and with `selected` the map as what strokes paint, as when it
    /// was saved.
    pub fn restore_uplift(
        &mut self,
        stored: &[crate::project::v2::StoredField],
        selected: bool,
    ) -> Result<()> {
        if selected {
            self.layers.selected = crate::layers::Selection::Uplift;
        }
        let Some(f) = stored.iter().find(|f| f.name == UPLIFT_FIELD) else {
            // Selected but never painted: an unpainted map.
            return if selected {
                self.ensure_uplift()
            } else {
                Ok(())
            };
        };
        let field = self.stored_field(f)?;
        self.store.insert_field(UPLIFT_FIELD, field)?;
        Ok(())
    }

    /// The uplift map over `rect` (inside the document), row-major, after every queued stroke;
    /// None where the document has none (1 everywhere).
    pub fn uplift_rect(&mut self, rect: crate::pages::geometry::Rect) -> Result<Option<Vec<f32>>> {
        self.field_rect(UPLIFT_FIELD, rect)
    }

    /// Moves the base to `base` and makes `height` the composite (the first layer's step).
    fn make_layered(&mut self) -> Result<()> {
        if self.is_layered() {
            return Ok(());
        }
        self.pump(None)?;
        let base = self.store.height();
        let desc = *base.desc();
        let mut composite = Field::new(self.gpu(), desc, base.flat())?;
        composite.set_budgets(base.places().budgets().clone());
        composite.set_frames_in_flight(base.places().detached);
        composite.succeed(base);
        let base = self
            .store
            .insert_field(HEIGHT, composite)?
            .expect("every store has a height field");
        self.store.insert_field(BASE_FIELD, base)?;
        self.log.rename_field(HEIGHT, BASE_FIELD);
        let mut compositor = Compositor::new(self.gpu(), desc.format)?;
        compositor.detached = self.frames_in_flight;
        self.compositor = Some(compositor);
        Ok(())
    }

    /// Runs a layer step (after every queued stroke) as one undo step; `base_dir` resolves the
    /// relative paths of an `add` step's files. Checked first: on error nothing changed.
    pub fn layer_op(&mut self, op: &LayerOp, base_dir: &Path) -> Result<()> {
        self.layers
            .check(op)
            .map_err(|e| BrushError::Layer(format!("{} {:?}: {e}", op.op_name(), op.name())))?;
        let loaded = match op {
            LayerOp::Add { files, .. } => load_layer_files(*self.desc(), files, base_dir)?,
            _ => Vec::new(),
        };
        self.pump(None)?;
        match op {
            // The uplift map is no layer: the document stays as layered as it was.
            LayerOp::Select { name } if name == crate::layers::UPLIFT => self.ensure_uplift()?,
            // Selecting the base of a document without layers changes nothing but the selection.
            LayerOp::Select { .. } if !self.is_layered() => {}
            _ => self.make_layered()?,
        }
        let before = self.layers.clone();
        let mut fields = Vec::new();
        match op {
            LayerOp::MergeDown { name } => {
                let i = self.layers.index_of(name).expect("checked");
                let layer = self.layers.layers[i].clone();
                let target = match i.checked_sub(1) {
                    Some(b) => self.layers.layers[b].field(Part::Value),
                    None => BASE_FIELD.to_string(),
                };
                let c = self.compositor.as_mut().expect("layered");
                c.merge(&mut self.store, &target, &layer)?;
                fields.push(target);
            }
            LayerOp::FillMask { name, rules } => {
                let i = self.layers.index_of(name).expect("checked");
                let mask = self.layers.layers[i].field(Part::Mask);
                let c = self.compositor.as_mut().expect("layered");
                c.fill_mask(&mut self.store, &self.layers, i, rules)?;
                fields.push(mask);
            }
            LayerOp::Duplicate { name, .. } => {
                let source =
                    self.layers.layers[self.layers.index_of(name).expect("checked")].clone();
                let id = self.layers.next_id;
                for part in Part::ALL {
                    let from = self
                        .store
                        .field(&source.field(part))
                        .expect("a layer's fields exist");
                    let copy = Field::from_pages(
                        self.gpu(),
                        *from.desc(),
                        from.flat(),
                        &from.page_heights()?,
                    )?;
                    self.store
                        .insert_field(&crate::layers::field_name(id, part), copy)?;
                }
            }
            LayerOp::Add { mode, .. } => {
                let id = self.layers.next_id;
                let desc = f32_desc(self.desc());
                for (part, values) in Part::ALL.into_iter().zip(loaded) {
                    let name = crate::layers::field_name(id, part);
                    let field = match values {
                        Some(v) => Field::from_heights(self.gpu(), desc, &v, Budgets::default())?,
                        None => Field::new(self.gpu(), desc, part.default_value(*mode))?,
                    };
                    self.store.insert_field(&name, field)?;
                }
            }
            _ => {}
        }
        self.layers.apply(op);
        let (budget, detached) = (self.undo_budget, self.frames_in_flight);
        let budgets = self.base().places().budgets().clone();
        if let Some(l) = self.layers.layers.iter().max_by_key(|l| l.id) {
            for part in Part::ALL {
                if let Some(f) = self.store.field_mut(&l.field(part)) {
                    f.set_undo_budget(budget);
                    f.set_frames_in_flight(detached);
                    f.set_budgets(budgets.clone());
                }
            }
        }
        self.log.push(LogEntry::Stack {
            before: Box::new(before),
            after: Box::new(self.layers.clone()),
            fields,
        });
        self.composite()
    }

    /// With frames in flight, the brush work a pump submits and the copy-on-write copies it
    /// needs are left running behind the frame the GPU draws instead of waited for
    /// ([`crate::brush::gpu::BrushEngine::set_detached`], [`Field::set_frames_in_flight`]).
    pub fn set_frames_in_flight(&mut self, on: bool) {
        self.frames_in_flight = on;
        self.brushes.set_detached(on);
        if let Some(c) = &mut self.compositor {
            c.detached = on;
        }
        let names: Vec<String> = self.store.names().map(str::to_string).collect();
        for name in names {
            if let Some(f) = self.store.field_mut(&name) {
                f.set_frames_in_flight(on);
            }
        }
    }

    /// Sets the memory budgets of the document's pages (the base's and the composite's).
    /// Each field (the base, the composite, every layer field) pages under them on its own.
    pub fn set_budgets(&mut self, budgets: Budgets) {
        let names: Vec<String> = self.store.names().map(str::to_string).collect();
        for name in names {
            if let Some(f) = self.store.field_mut(&name) {
                f.set_budgets(budgets.clone());
            }
        }
    }

    /// Where the document's pages are, its budgets and its traffic.
    pub fn memory(&self) -> MemoryReport {
        self.height().places().report()
    }

    /// Height at texel (x, y), clamped into the document, after every queued stroke.
    pub fn height_at(&mut self, x: i32, y: i32) -> Result<f32> {
        self.pump(None)?;
        Ok(self.store.height().height_at(x, y)?)
    }

    /// Undoes the last step, a stroke or a layer step (after finishing every queued stroke);
    /// false if there is none.
    pub fn undo(&mut self) -> Result<bool> {
        self.step_back(true)
    }

    /// Redoes the last undone step (after finishing every queued stroke); false if there is none.
    pub fn redo(&mut self) -> Result<bool> {
        self.step_back(false)
    }

    /// Takes the last step back for good: undone, and not left to redo (an edit given up or
    /// failed before it was journaled); false if there is none.
    pub fn take_back(&mut self) -> Result<bool> {
        if !self.undo()? {
            return Ok(false);
        }
        let entry = self.log.forget_redo().expect("the step just undone");
        for name in entry.fields() {
            if let Some(f) = self.store.field_mut(name) {
                f.forget_redo();
            }
        }
        Ok(true)
    }

    fn step_back(&mut self, undo: bool) -> Result<bool> {
        self.pump(None)?;
        let Some(entry) = self.log.step(undo) else {
            return Ok(false);
        };
        let fields = match &entry {
            LogEntry::Fields(f) => f,
            LogEntry::Stack {
                before,
                after,
                fields,
            } => {
                self.layers = if undo {
                    (**before).clone()
                } else {
                    (**after).clone()
                };
                fields
            }
        };
        for name in fields {
            if let Some(f) = self.store.field_mut(name) {
                if undo {
                    f.undo();
                } else {
                    f.redo();
                }
            }
        }
        self.composite()?;
        Ok(true)
    }

    /// Bounds the GPU memory undo steps hold; the oldest steps are forgotten past it.
    pub fn set_undo_budget(&mut self, bytes: u64) {
        self.undo_budget = bytes;
        let names: Vec<String> = self.store.names().map(str::to_string).collect();
        for name in names {
            if let Some(f) = self.store.field_mut(&name) {
                f.set_undo_budget(bytes);
            }
        }
    }

    /// Solo view: the composite shows the base and the selected layer only (a view setting, not
    /// a step; saved documents are unaffected).
    pub fn set_solo(&mut self, on: bool) -> Result<()> {
        self.solo = on;
        self.composite()
    }

    /// GPU memory the undo/redo steps hold (upper bound).
    pub fn undo_bytes(&self) -> u64 {
        self.store
            .names()
            .filter_map(|n| self.store.field(n))
            .map(|f| f.versions().undo_bytes())
            .sum()
    }

    /// Steps that can be undone now.
    pub fn undo_steps(&self) -> usize {
        self.log.len()
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

/// The `add` step's files, read at the document's size (value: integer files over the
/// document's range; alpha and mask: over 0..1), in part order.
fn load_layer_files(
    d: DocumentDesc,
    files: &LayerFiles,
    base_dir: &Path,
) -> Result<Vec<Option<Vec<f32>>>> {
    let read = |what: &str, path: &Option<String>, range: (f32, f32)| -> Result<Option<Vec<f32>>> {
        let Some(p) = path else { return Ok(None) };
        let options = crate::terrain::formats::ReadOptions {
            size: Some((d.width, d.height)),
            range,
            ..Default::default()
        };
        crate::project::read_heights(&base_dir.join(p), &options)
            .map(|h| Some(h.values))
            .map_err(|e| BrushError::Layer(format!("add: {what}: {e}")))
    };
    Ok(vec![
        read("value", &files.value, (d.height_min, d.height_max))?,
        read("alpha", &files.alpha, (0.0, 1.0))?,
        read("mask", &files.mask, (0.0, 1.0))?,
    ])
}

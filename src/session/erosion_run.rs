//! A region erosion run made live (the editor's region tool): the model (docs/erosion.md) steps
//! a few steps at a time between frames on the GPU, the base shows the terrain as it is and a
//! water field beside it the water; finishing settles the sediment, writes the region as one
//! undo step and gives the journal step that replays it bit for bit (`Step::Erode` with the
//! steps run).

use crate::brush::error::{BrushError, Result};
use crate::document::Document;
use crate::erosion::gpu::GpuErosion;
use crate::erosion::run::RunSpec;
use crate::erosion::shared::ErosionPush;
use crate::erosion::ErosionBrush;
use crate::journal::Step;
use crate::pages::geometry::Region;
use crate::pages::Field;
use std::time::{Duration, Instant};

/// The field a live run keeps its water in, for the viewport's overlay (0: dry, toward 1:
/// deep); removed when the run ends.
pub const WATER_FIELD: &str = "erosion water";

/// Water depth (texels) shown at 63% of the overlay's strength: `1 - exp(-d / WATER_SHOWN)`.
const WATER_SHOWN: f32 = 0.05;

/// Steps a frame may run at most, however fast they are.
pub const MAX_STEPS_PER_FRAME: usize = 256;

/// How far a run is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    pub region: Region,
    pub done: usize,
    pub steps: usize,
    pub paused: bool,
    /// Steps the last frame ran.
    pub per_frame: usize,
}

/// A live erosion run over a region of a document's base.
pub struct RegionRun {
    region: Region,
    erosion: ErosionBrush,
    spec: RunSpec,
    push: ErosionPush,
    sim: GpuErosion,
    /// The region's heights when the run started (its wear and deposits are from them).
    before: Vec<f32>,
    done: usize,
    paused: bool,
    /// Whether the base (and the water field) hold a write of this run: its undo step.
    wrote: bool,
    per_frame: usize,
    max_per_frame: usize,
    /// When the view was last brought up to date, and what that cost.
    shown_at: Instant,
    show_cost: Duration,
}

impl RegionRun {
    /// Starts a run of `erosion` (its steps the total) over `region` of `doc`'s base after
    /// every queued stroke, running at most `max_per_frame` steps a frame; refused (nothing
    /// changed) with a layer selected, a region outside the document, bad parameters, or a
    /// region past what the device binds.
    pub fn start(
        doc: &mut Document,
        tools: &mut crate::edit::Tools,
        region: Region,
        erosion: ErosionBrush,
        max_per_frame: usize,
    ) -> Result<Self> {
        crate::edit::erode::check_region(doc, region, true)?;
        erosion.validate().map_err(BrushError::Layer)?;
        let d = *doc.desc();
        let spec = RunSpec::of(&erosion, &d);
        let before = doc.base_rect(region.rect())?;
        let b: Vec<f32> = before.iter().map(|h| h * spec.height_scale).collect();
        let kernels = tools.erode.kernels(doc.gpu())?;
        let size = [region.width, region.height];
        let sim = GpuErosion::with_kernels(doc.gpu(), &kernels, size, &b)?;
        let water = Field::new(doc.gpu(), crate::layers::composite::f32_desc(&d), 0.0)?;
        doc.store.insert_field(WATER_FIELD, water)?;
        let per_frame = max_per_frame.clamp(1, MAX_STEPS_PER_FRAME);
        Ok(Self {
            region,
            erosion,
            push: spec.params.push(size),
            spec,
            sim,
            before,
            done: 0,
            paused: false,
            wrote: false,
            per_frame: per_frame.min(4),
            max_per_frame: per_frame,
            shown_at: Instant::now(),
            show_cost: Duration::ZERO,
        })
    }

    pub fn progress(&self) -> Progress {
        Progress {
            region: self.region,
            done: self.done,
            steps: self.spec.steps,
            paused: self.paused,
            per_frame: self.per_frame,
        }
    }

    pub fn set_paused(&mut self, paused: bool) {
        self.paused = paused;
    }

    pub fn set_max_per_frame(&mut self, n: usize) {
        self.max_per_frame = n.clamp(1, MAX_STEPS_PER_FRAME);
        self.per_frame = self.per_frame.min(self.max_per_frame);
    }

    /// Whether every step has run.
    pub fn complete(&self) -> bool {
        self.done >= self.spec.steps
    }

    /// One frame's work: unless paused or complete, runs this frame's steps (halved when a
    /// frame's steps took longer than `budget_ms`, doubled up to the maximum while under half
    /// of it), then brings the view up to date when due (at most a fifth of the time goes to
    /// reading the region back, and always after the last step).
    pub fn advance(&mut self, doc: &mut Document, budget_ms: f64) -> Result<()> {
        if self.paused || self.complete() {
            return Ok(());
        }
        let n = self.per_frame.min(self.spec.steps - self.done);
        let t = Instant::now();
        {
            let _p = crate::profile::scope("erosion run: steps");
            self.sim
                .submit_steps(&self.push, self.spec.model, n, None)?;
        }
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if ms > budget_ms {
            self.per_frame = (self.per_frame / 2).max(1);
        } else if ms < budget_ms / 2.0 && n == self.per_frame {
            self.per_frame = (self.per_frame * 2).min(self.max_per_frame);
        }
        self.done += n;
        if self.complete() || self.shown_at.elapsed() >= self.show_cost * 4 {
            self.show(doc)?;
        }
        Ok(())
    }

    /// Writes the terrain as it is now into the base and the water into [`WATER_FIELD`].
    fn show(&mut self, doc: &mut Document) -> Result<()> {
        let _p = crate::profile::scope("erosion run: show");
        let t = Instant::now();
        let (b, d) = self.sim.terrain_and_water()?;
        let scale = self.spec.height_scale;
        let heights: Vec<f32> = b.iter().map(|b| b / scale).collect();
        let rect = self.region.rect();
        doc.write_base_rect(rect, &heights, self.wrote)?;
        let water: Vec<f32> = d.iter().map(|d| 1.0 - (-d / WATER_SHOWN).exp()).collect();
        if let Some(f) = doc.store.field_mut(WATER_FIELD) {
            crate::pages::rects::write(f, rect, &water, self.wrote)?;
        }
        self.wrote = true;
        self.shown_at = Instant::now();
        self.show_cost = t.elapsed();
        Ok(())
    }

    /// Ends the run: the suspended sediment settles, the water drops, the region's heights go
    /// into the base as one undo step (with what the view wrote) and the water field goes.
    /// Returns the journal step that replays the run (None when no step ran: nothing changed).
    /// On a failure the run's undo step (the view's writes) is undone, so the document stays
    /// as its journal says.
    pub fn finish(self, doc: &mut Document) -> Result<Option<Step>> {
        doc.store.remove_field(WATER_FIELD);
        if self.done == 0 {
            return Ok(None);
        }
        let scale = self.spec.height_scale;
        let heights: Result<Vec<f32>> = self
            .sim
            .settled()
            .map(|b| b.iter().map(|b| b / scale).collect())
            .map_err(Into::into);
        let after = heights.as_ref().ok().cloned();
        let rect = self.region.rect();
        doc.end_live_write(rect, heights, self.wrote)?;
        if let Some(after) = after {
            doc.add_wear(rect, &self.before, &after)?;
        }
        Ok(Some(Step::Erode {
            region: self.region,
            erosion: ErosionBrush {
                steps: self.done as u32,
                ..self.erosion
            },
        }))
    }
}

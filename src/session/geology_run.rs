//! A geology run made live (the editor's Geology panel): the stream-power model
//! (docs/geology.md) runs coarse to fine on the GPU a submission or more between frames, and the
//! base shows the heights as the run has them, carried up to the region. It can be paused,
//! continued, stopped where it is, or cancelled. Finishing writes the region as one undo step
//! and gives the journal step that replays it bit for bit (`Step::Geology`, with `stop_after`
//! where it was stopped by hand).

use crate::brush::error::Result;
use crate::document::Document;
use crate::geology::gpu::ITERATIONS_PER_SUBMIT;
use crate::geology::params::GeologyRun;
use crate::geology::run::{RunOutput, RunProgress, RunSpec, Runner};
use crate::journal::Step;
use crate::pages::geometry::Region;
use std::time::{Duration, Instant};

/// How far a live run is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LiveProgress {
    pub run: RunProgress,
    /// Years simulated so far over every level (iterations times Δt).
    pub years: f64,
    /// The run solves for its steady state: its iterations stand for no years.
    pub solved: bool,
    pub paused: bool,
}

/// A live geology run over a region of a document's base.
pub struct GeologyLive {
    region: Region,
    run: GeologyRun,
    runner: Runner,
    /// The region's heights when the run began.
    original: Vec<f32>,
    paused: bool,
    /// Iterations a submission runs: halved while one takes longer than the frame's budget,
    /// doubled while under half of it (up to the runner's submission size).
    per_submit: usize,
    /// Whether the base holds a write of this run: its undo step.
    wrote: bool,
    /// When the view was last brought up to date, and what that cost.
    shown_at: Instant,
    show_cost: Duration,
}

impl GeologyLive {
    /// Starts `run` over `region` of `doc`'s base after every queued stroke, under the
    /// document's uplift map; refused (nothing changed) as [`crate::edit::geology::inputs`]
    /// refuses.
    pub fn start(
        doc: &mut Document,
        tools: &mut crate::edit::Tools,
        region: Region,
        run: GeologyRun,
    ) -> Result<Self> {
        let (original, uplift) = crate::edit::geology::inputs(doc, region, &run, true)?;
        let kernels = tools.geology.kernels(doc.gpu())?;
        let spec = RunSpec::of(&run, doc.desc());
        let runner = Runner::new(
            Some((doc.gpu(), &kernels)),
            &original,
            [region.width, region.height],
            uplift.as_deref(),
            &spec,
        );
        Ok(Self {
            region,
            run,
            runner,
            original,
            paused: false,
            per_submit: 4,
            wrote: false,
            shown_at: Instant::now(),
            show_cost: Duration::ZERO,
        })
    }

    pub fn region(&self) -> Region {
        self.region
    }

    pub fn progress(&self) -> LiveProgress {
        let run = self.runner.progress();
        LiveProgress {
            run,
            years: run.total as f64 * f64::from(self.run.params.time_step),
            solved: self.run.solve_steady,
            paused: self.paused,
        }
    }

    pub fn set_paused(&mut self, paused: bool) {
        self.paused = paused;
    }

    /// Whether every level has run.
    pub fn complete(&self) -> bool {
        self.runner.complete()
    }

    /// One frame's work: unless paused or complete, submissions until `budget_ms` is spent
    /// (at least one), then the view brought up to date when due (at most a fifth of the time
    /// goes to reading the region back, and always after the last submission).
    pub fn advance(&mut self, doc: &mut Document, budget_ms: f64) -> Result<()> {
        if self.paused || self.complete() {
            return Ok(());
        }
        let t = Instant::now();
        {
            let _p = crate::profile::scope("geology run: iterations");
            loop {
                let s = Instant::now();
                let done = self.runner.advance(self.per_submit, None)?;
                let ms = s.elapsed().as_secs_f64() * 1e3;
                if ms > budget_ms {
                    self.per_submit = (self.per_submit / 2).max(1);
                } else if ms < budget_ms / 2.0 {
                    self.per_submit = (self.per_submit * 2).min(ITERATIONS_PER_SUBMIT);
                }
                if done || t.elapsed().as_secs_f64() * 1e3 >= budget_ms {
                    break;
                }
            }
        }
        if self.complete() || self.shown_at.elapsed() >= self.show_cost * 4 {
            self.show(doc)?;
        }
        Ok(())
    }

    /// Writes the heights as the run has them now into the base (this run's undo step).
    fn show(&mut self, doc: &mut Document) -> Result<()> {
        let _p = crate::profile::scope("geology run: show");
        let t = Instant::now();
        let heights = self.runner.heights_now(&self.original)?;
        doc.write_base_rect(self.region.rect(), &heights, self.wrote)?;
        self.wrote = true;
        self.shown_at = Instant::now();
        self.show_cost = t.elapsed();
        Ok(())
    }

    /// Ends the run where it is: the region's heights go into the base as one undo step (with
    /// what the view wrote). Returns the journal step that replays it (stopped by hand: with
    /// `stop_after`) and the run's output; None when no iteration ran (nothing changed). On a
    /// failure the run's undo step is undone, so the document stays as its journal says.
    pub fn finish(self, doc: &mut Document) -> Result<Option<(Step, RunOutput)>> {
        let p = self.runner.progress();
        if p.total == 0 {
            return self.cancel(doc).map(|()| None);
        }
        let stop_after = (!self.runner.complete()).then_some(p.total as u32);
        let mut heights = self.original;
        let (out, heights) = match self.runner.finish(&mut heights) {
            Ok(out) => (Some(out), Ok(heights)),
            Err(e) => (None, Err(e.into())),
        };
        doc.end_live_write(self.region.rect(), heights, self.wrote)?;
        let out = out.expect("the heights were written: the run finished");
        let step = Step::Geology {
            region: self.region,
            run: GeologyRun {
                stop_after,
                ..self.run
            },
        };
        Ok(Some((step, out)))
    }

    /// Gives the run up: the region goes back to what it was (the view's writes undone).
    pub fn cancel(self, doc: &mut Document) -> Result<()> {
        if self.wrote {
            doc.take_back()?;
        }
        Ok(())
    }
}

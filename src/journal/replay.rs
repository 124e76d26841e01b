//! Running a checked journal's steps on a [`Replayer`]: the GPU document or the CPU twin.

use super::{Journal, Step};
use crate::brush::path::PathSpec;
use crate::brush::shared::BrushInstance;
use crate::brush::stroke::stroke_instances;
use crate::brush::BrushSettings;
use crate::erosion::ErosionBrush;
use crate::geology::params::GeologyRun;
use crate::layers::LayerOp;
use crate::pages::geometry::Region;
use std::path::Path;

/// What a journal replays on: the GPU engine or the CPU twin.
pub trait Replayer {
    type Error;
    fn stroke(
        &mut self,
        brush: &BrushSettings,
        instances: &[BrushInstance],
    ) -> Result<(), Self::Error>;
    fn undo(&mut self) -> Result<bool, Self::Error>;
    fn redo(&mut self) -> Result<bool, Self::Error>;
    /// A layer step (checked against the stack by [`Journal::check`](super::Journal::check)); `base_dir` is where the
    /// journal lies (files are already resolved).
    fn layer(&mut self, op: &LayerOp, base_dir: &Path) -> Result<(), Self::Error>;
    /// An erosion run over `region` of the base (checked by [`Journal::check`](super::Journal::check)), one undo step.
    fn erode(&mut self, region: Region, erosion: &ErosionBrush) -> Result<(), Self::Error>;
    /// A path over the base (checked by [`Journal::check`](super::Journal::check)), one undo step.
    fn path(&mut self, spec: &PathSpec) -> Result<(), Self::Error>;
    /// A geology run over `region` of the base (checked by [`Journal::check`](super::Journal::check)), one undo step.
    fn geology(&mut self, region: Region, run: &GeologyRun) -> Result<(), Self::Error>;
}

impl Journal {
    /// Runs every step on `target`, calling `after_stroke(step index)` after each stroke.
    pub fn replay<R: Replayer>(
        &self,
        target: &mut R,
        after_stroke: impl FnMut(usize, &R),
    ) -> Result<(), R::Error> {
        match self.replay_until_error(target, after_stroke) {
            (_, Some(e)) => Err(e),
            (_, None) => Ok(()),
        }
    }

    /// [`Self::replay`], stopping at the first step that fails: how many steps ran in full (the
    /// target holds them) and the failing step's error.
    pub fn replay_until_error<R: Replayer>(
        &self,
        target: &mut R,
        mut after_stroke: impl FnMut(usize, &R),
    ) -> (usize, Option<R::Error>) {
        for (i, step) in self.steps.iter().enumerate() {
            // A span per step in traces (and in SCARP_PROFILE's totals).
            let _step = crate::profile::scope(span(step));
            if let Err(e) = replay_step(step, target) {
                return (i, Some(e));
            }
            if matches!(step, Step::Stroke { .. }) {
                after_stroke(i, target);
            }
        }
        (self.steps.len(), None)
    }
}

/// The trace span of `step`.
fn span(step: &Step) -> &'static str {
    match step {
        Step::Stroke { .. } => "step: stroke",
        Step::Undo(_) => "step: undo",
        Step::Redo(_) => "step: redo",
        Step::Layer(_) => "step: layer",
        Step::Erode { .. } => "step: erode",
        Step::Path(_) => "step: path",
        Step::Geology { .. } => "step: geology",
    }
}

/// Runs one checked step on `target`.
fn replay_step<R: Replayer>(step: &Step, target: &mut R) -> Result<(), R::Error> {
    match step {
        Step::Stroke { brush, samples } => target.stroke(brush, &stroke_instances(brush, samples)),
        // Counts were checked by `Journal::check`.
        Step::Undo(n) => (0..*n).try_for_each(|_| target.undo().map(drop)),
        Step::Redo(n) => (0..*n).try_for_each(|_| target.redo().map(drop)),
        Step::Layer(op) => target.layer(op, Path::new(".")),
        Step::Erode { region, erosion } => target.erode(*region, erosion),
        Step::Path(spec) => target.path(spec),
        Step::Geology { region, run } => target.geology(*region, run),
    }
}

impl Replayer for crate::brush::cpu::CpuTerrain {
    type Error = std::convert::Infallible;
    fn stroke(
        &mut self,
        brush: &BrushSettings,
        instances: &[BrushInstance],
    ) -> Result<(), Self::Error> {
        self.apply_stroke(brush, instances);
        Ok(())
    }
    fn undo(&mut self) -> Result<bool, Self::Error> {
        Ok(crate::brush::cpu::CpuTerrain::undo(self))
    }
    fn layer(&mut self, op: &LayerOp, _base_dir: &Path) -> Result<(), Self::Error> {
        // The twin of one height field; layered documents have theirs in tests/layers.rs.
        panic!("the CPU twin of a height field cannot replay layer step {op:?}")
    }
    fn redo(&mut self) -> Result<bool, Self::Error> {
        Ok(crate::brush::cpu::CpuTerrain::redo(self))
    }
    fn erode(&mut self, region: Region, erosion: &ErosionBrush) -> Result<(), Self::Error> {
        let d = *self.desc();
        let spec = crate::erosion::run::RunSpec::of(erosion, &d);
        self.erode_region(region, &spec);
        Ok(())
    }
    fn path(&mut self, spec: &PathSpec) -> Result<(), Self::Error> {
        self.apply_path(spec);
        Ok(())
    }
    fn geology(&mut self, region: Region, run: &GeologyRun) -> Result<(), Self::Error> {
        self.geology_region(region, run);
        Ok(())
    }
}

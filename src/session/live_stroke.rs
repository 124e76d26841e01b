//! Strokes painted live. Samples arrive one per motion event, picked by the frames (or from a
//! journal being replayed through the same path); the stroke's settled instances are queued as
//! they appear and the rest when the stroke ends, so a painted stroke is exactly the stroke a
//! journal with the same samples replays (`stroke_instances_settled`). A ramp is dragged from A to B: it queues
//! nothing until it ends, and keeps only its first and last samples.

use crate::brush::error::BrushError;
use crate::brush::stroke::{stroke_instances_settled, StrokeSample};
use crate::brush::{BrushSettings, BrushType};
use crate::document::Document;
use crate::edit::Tools;
use crate::journal::Step;

/// A stroke in progress.
pub struct LiveStroke {
    brush: BrushSettings,
    samples: Vec<StrokeSample>,
    /// Instances already queued.
    emitted: usize,
}

impl LiveStroke {
    pub fn new(brush: BrushSettings) -> Self {
        Self {
            brush,
            samples: Vec::new(),
            emitted: 0,
        }
    }

    pub fn brush(&self) -> &BrushSettings {
        &self.brush
    }

    pub fn samples(&self) -> usize {
        self.samples.len()
    }

    /// Queues the instances not queued yet: the settled ones, or with `all` every one.
    fn queue(
        &mut self,
        terrain: &mut Document,
        tools: &mut Tools,
        all: bool,
    ) -> Result<usize, BrushError> {
        let (instances, settled) = stroke_instances_settled(&self.brush, &self.samples);
        let end = if all { instances.len() } else { settled };
        if end <= self.emitted {
            return Ok(0);
        }
        let part = &instances[self.emitted..end];
        crate::edit::stroke::enqueue(terrain, tools, &self.brush, part, self.emitted > 0)?;
        self.emitted = end;
        Ok(part.len())
    }

    /// Adds a sample (document texels, pressure 0..1, seconds since the stroke began) and
    /// queues the instances it settled; returns how many.
    pub fn add(
        &mut self,
        terrain: &mut Document,
        tools: &mut Tools,
        sample: StrokeSample,
    ) -> Result<usize, BrushError> {
        self.samples.push(sample);
        if self.brush.brush == BrushType::Ramp {
            return Ok(0);
        }
        self.queue(terrain, tools, false)
    }

    /// Ends the stroke: queues the remaining instances and returns the journal step (None for a
    /// stroke without samples) and how many instances were queued now.
    pub fn finish(
        mut self,
        terrain: &mut Document,
        tools: &mut Tools,
    ) -> Result<(Option<Step>, usize), BrushError> {
        if self.samples.is_empty() {
            return Ok((None, 0));
        }
        if self.brush.brush == BrushType::Ramp && self.samples.len() > 2 {
            let last = self.samples[self.samples.len() - 1];
            self.samples.truncate(1);
            self.samples.push(last);
        }
        let n = self.queue(terrain, tools, true)?;
        Ok((
            Some(Step::Stroke {
                brush: self.brush,
                samples: self.samples,
            }),
            n,
        ))
    }
}

//! Edits: the operations a document takes, one file each. Each file holds the operation's
//! check (why it cannot run now, before anything changes), its apply on the open
//! [`Document`] (on the GPU, one undo step) and names its CPU twin; the GPU state an operation
//! needs (pipelines, scratch buffers) is made at its first use and kept in its part of
//! [`Tools`], which the caller keeps beside the document (the session, a command, a test).
//! The document itself holds nothing per tool. A journal replays onto a [`Target`]: a document
//! with its tools.
//!
//! Adding an operation: a file here (check, apply, its tools), a journal step and its
//! [`Replayer`] method, and an editor panel (docs/ARCHITECTURE.md).

pub mod erode;
pub mod geology;
pub mod path;
pub mod stroke;

use crate::brush::error::{BrushError, Result};
use crate::brush::shared::BrushInstance;
use crate::brush::BrushSettings;
use crate::document::Document;
use crate::journal::Replayer;
use crate::layers::LayerOp;
use std::path::Path;

/// Why `region` of the base cannot be reshaped now, if it cannot: a layer selected, a region
/// outside the document, or one past `most` texels (what the GPU takes at once, when the run is
/// on the GPU); `smaller` says what to do then.
fn check_base_region(
    doc: &Document,
    region: crate::pages::geometry::Region,
    most: Option<u64>,
    smaller: &str,
) -> Result<()> {
    erode::check(doc)?;
    let d = *doc.desc();
    crate::pages::geometry::check_region(d.width, d.height, region).map_err(BrushError::Layer)?;
    let texels = u64::from(region.width) * u64::from(region.height);
    match most {
        Some(most) if texels > most => Err(BrushError::Layer(format!(
            "a {}x{} region is past what this GPU simulates at once ({most} texels): {smaller}",
            region.width, region.height
        ))),
        _ => Ok(()),
    }
}

/// The GPU state of every operation, each part made at its operation's first use.
#[derive(Default)]
pub struct Tools {
    pub erode: erode::Tools,
    pub geology: geology::Tools,
    pub path: path::Tools,
}

/// A document and its tools: what edits apply to and journals replay onto.
pub struct Target<'a> {
    pub doc: &'a mut Document,
    pub tools: &'a mut Tools,
}

impl<'a> Target<'a> {
    pub fn new(doc: &'a mut Document, tools: &'a mut Tools) -> Self {
        Self { doc, tools }
    }
}

impl Replayer for Target<'_> {
    type Error = BrushError;
    fn layer(&mut self, op: &LayerOp, base_dir: &Path) -> Result<()> {
        self.doc.layer_op(op, base_dir)
    }
    fn stroke(&mut self, brush: &BrushSettings, instances: &[BrushInstance]) -> Result<()> {
        stroke::apply(self.doc, self.tools, brush, instances)
    }
    fn undo(&mut self) -> Result<bool> {
        self.doc.undo()
    }
    fn redo(&mut self) -> Result<bool> {
        self.doc.redo()
    }
    fn erode(
        &mut self,
        region: crate::pages::geometry::Region,
        erosion: &crate::erosion::ErosionBrush,
    ) -> Result<()> {
        let d = *self.doc.desc();
        let spec = crate::erosion::run::RunSpec::of(erosion, &d);
        erode::region(self.doc, region, &spec, true, |_| {}).map(|_| ())
    }
    fn geology(
        &mut self,
        region: crate::pages::geometry::Region,
        run: &crate::geology::params::GeologyRun,
    ) -> Result<()> {
        geology::region(
            self.doc,
            &mut self.tools.geology,
            region,
            run,
            true,
            |_, _, _| {},
        )
        .map(|_| ())
    }
    fn path(&mut self, spec: &crate::brush::path::PathSpec) -> Result<()> {
        path::apply(self.doc, &mut self.tools.path, spec)
    }
}

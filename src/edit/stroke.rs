//! A stroke as an edit: the one entry for every brush. Painting brushes go to the document,
//! which routes them to the selected layer's fields and queues them on the brush engine
//! ([`Document::enqueue_stroke_part`]); the erode brush is [`super::erode::stroke`]. CPU twin:
//! [`crate::brush::cpu::CpuTerrain`]'s strokes.

use super::Tools;
use crate::brush::error::Result;
use crate::brush::shared::BrushInstance;
use crate::brush::{BrushSettings, BrushType};
use crate::document::Document;

/// Why a stroke of `brush` cannot run on the document's selection now, if it cannot.
pub fn check(doc: &Document, brush: &BrushSettings) -> Result<()> {
    if brush.brush == BrushType::Erode {
        super::erode::check(doc)?;
        if doc.layers().paints_uplift() {
            return Err(crate::brush::error::BrushError::Layer(
                "the erode brush reshapes the base, and the uplift map is selected: select the base"
                    .into(),
            ));
        }
    }
    doc.check_stroke(brush)
}

/// Queues a stroke's instances (with `join`, the rest of the stroke queued before: the same
/// undo step). Erode strokes run at once; painting strokes run as the engine is pumped.
pub fn enqueue(
    doc: &mut Document,
    tools: &mut Tools,
    brush: &BrushSettings,
    instances: &[BrushInstance],
    join: bool,
) -> Result<()> {
    if brush.brush == BrushType::Erode {
        check(doc, brush)?;
        return super::erode::stroke(doc, &mut tools.erode, brush, instances, join);
    }
    doc.enqueue_stroke_part(brush, instances, join)
}

/// Applies one stroke's instances in order, as one undo step (headless replay).
pub fn apply(
    doc: &mut Document,
    tools: &mut Tools,
    brush: &BrushSettings,
    instances: &[BrushInstance],
) -> Result<()> {
    enqueue(doc, tools, brush, instances, false)?;
    doc.pump(None).map(|_| ())
}

//! A path as an edit (roads and rivers, docs/journal.md "Paths"): planned on the CPU
//! ([`crate::brush::path`]), carved, raised or graded over the base by one kernel
//! ([`crate::brush::path_gpu`]) as one undo step. CPU twin:
//! [`crate::brush::cpu::CpuTerrain::apply_path`]. The kernel is made at the first path and
//! kept in [`Tools`].

use crate::brush::error::{BrushError, Result};
use crate::brush::path::{self, PathSpec};
use crate::brush::path_gpu::GpuPath;
use crate::document::Document;

/// What paths keep between edits: the kernel.
#[derive(Default)]
pub struct Tools {
    kernel: Option<GpuPath>,
}

/// Why `spec` cannot run now, if it cannot: a layer selected, a bad path, or one whose box is
/// past what this GPU holds at once.
pub fn check(doc: &Document, spec: &PathSpec) -> Result<()> {
    if let Some(l) = doc.layers().selected_layer() {
        return Err(BrushError::Layer(format!(
            "a path reshapes the base: select it (layer {:?} is selected)",
            l.name
        )));
    }
    let d = *doc.desc();
    spec.validate(d.width, d.height)
        .map_err(|e| BrushError::Layer(format!("path: {e}")))?;
    let rect = path::rect_of(spec, d.width, d.height);
    let texels = rect.width().max(0) as u64 * rect.height().max(0) as u64;
    let most = GpuPath::max_texels(doc.gpu());
    let lists = path::tile_list_len(spec, rect);
    if lists > most.min(u64::from(u32::MAX)) {
        return Err(BrushError::Layer(format!(
            "path: too wide and long for one pass ({lists} tile-list entries, at most \
             {most} on this GPU): split it or narrow it"
        )));
    }
    if texels > most {
        return Err(BrushError::Layer(format!(
            "path: its box of {}x{} texels is past what this GPU holds at once ({most}): \
             split it",
            rect.width(),
            rect.height()
        )));
    }
    Ok(())
}

/// Runs a path over the base as one undo step, after every queued stroke, on the GPU (a river's
/// water, [`path::water_surface`], planned on the CPU with the path, goes into the rivers field
/// in the same step). Refused
/// (nothing changed) while a layer is selected, and for a path that does not fit the document
/// or this GPU.
pub fn apply(doc: &mut Document, tools: &mut Tools, spec: &PathSpec) -> Result<()> {
    check(doc, spec)?;
    let d = *doc.desc();
    let rect = path::rect_of(spec, d.width, d.height);
    let mut values = doc.base_rect(rect)?;
    let plan = path::plan(spec, rect, &values);
    let water = (spec.water > 0.0).then(|| path::water_surface(spec, &plan, &values));
    if tools.kernel.is_none() {
        tools.kernel = Some(GpuPath::new(doc.gpu())?);
    }
    let kernel = tools.kernel.as_ref().expect("made above");
    kernel.apply(&plan, &mut values)?;
    doc.write_path_rect(rect, &values, water.as_deref())
}

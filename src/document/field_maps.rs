//! The document's field maps as tint fields (docs/maps.md, "In the viewport"): drainage,
//! wetness, profile and plan curvature from its heights, erosion's wear and deposits from their
//! fields, written into a field of the store the renderer tints with (`scarp render --overlay`,
//! the editor's *map overlay*).

use super::Document;
use crate::brush::error::Result;
use crate::render::analysis::Overlay;
use crate::render::terrain::Overlay as Tint;

impl Document {
    /// Writes field map `kind` (after every queued stroke) into the r32f field `name`, made the
    /// first time with no undo steps kept (a view, not an edit), its pages brought onto the
    /// GPU; returns how it tints. None for an overlay that is no field map.
    pub fn write_field_map(&mut self, kind: Overlay, name: &str) -> Result<Option<Tint>> {
        let d = *self.desc();
        let shaded = if kind == Overlay::Erosion {
            let all = d.bounds();
            let zeros = || vec![0.0; d.width as usize * d.height as usize];
            let wear = self.wear_rect(all, false)?.unwrap_or_else(zeros);
            let deposits = self.wear_rect(all, true)?.unwrap_or_else(zeros);
            Some((
                crate::maps::overlay::erosion_shades(&wear, &deposits),
                Tint::Uplift,
            ))
        } else {
            let heights = self.to_dense()?;
            let mut kernels = crate::maps::kernels::OnGpu::new(self.gpu())?;
            crate::maps::overlay::shades(kind, &heights, &d, &mut kernels)?
        };
        let Some((values, tint)) = shaded else {
            return Ok(None);
        };
        if self.store.field(name).is_none() {
            let mut field =
                crate::pages::Field::new(self.gpu(), crate::layers::composite::f32_desc(&d), 0.0)?;
            field.set_undo_budget(0);
            self.store.insert_field(name, field)?;
        }
        let field = self.store.field_mut(name).expect("made above");
        crate::pages::rects::write(field, d.bounds(), &values, false)?;
        field.ensure_visible(&d.page_ids().collect::<Vec<_>>())?;
        Ok(Some(tint))
    }
}

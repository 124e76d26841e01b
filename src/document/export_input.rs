//! The document as an engine export reads it ([`crate::terrain::engines::Input`], docs/engines.md):
//! windows of its heights (the layers' composite) and of erosion's wear and deposits, read from
//! the pages, so that a large document is never made whole. Each read first applies the queued
//! strokes.

use super::Document;
use crate::pages::geometry::Region;
use crate::terrain::engines::{Input, MapKind};
use crate::terrain::formats::Heights;

impl Input for Document {
    fn size(&self) -> [u32; 2] {
        [self.desc().width, self.desc().height]
    }

    fn heights(&mut self, r: Region) -> Result<Heights, String> {
        self.pump(None).map_err(|e| e.to_string())?;
        let values =
            crate::pages::rects::read(self.height(), r.rect()).map_err(|e| e.to_string())?;
        Ok(Heights {
            width: r.width,
            height: r.height,
            values,
        })
    }

    /// Wear and deposits: 0 everywhere where no erosion ran.
    fn holds(&self, kind: MapKind) -> bool {
        kind.stored()
    }

    fn stored(&mut self, kind: MapKind, r: Region) -> Result<Heights, String> {
        self.pump(None).map_err(|e| e.to_string())?;
        let values = self
            .wear_rect(r.rect(), kind == MapKind::Deposits)
            .map_err(|e| e.to_string())?
            .unwrap_or_else(|| vec![0.0; r.samples() as usize]);
        Ok(Heights {
            width: r.width,
            height: r.height,
            values,
        })
    }
}

//! The field tinting the terrain (a layer's mask, a region erosion's water), if any: which
//! field, how it tints, the change epoch of it the renderer has caught up with, and the r32f
//! placeholder bound for its pages without images (and when there is none).

use super::blocks::Blocks;
use super::Overlay;
use crate::gpu::{Access, Image, Recorder};
use crate::pages::{Field, PageError, PageId, PageStore};
use std::collections::BTreeSet;

/// The tinting field (by name, looked up in the store each frame) and its placeholder.
pub(super) struct Tint {
    name: Option<String>,
    pub(super) style: Overlay,
    seen: u64,
    pub(super) placeholder: Image,
}

impl Tint {
    pub(super) fn new(placeholder: Image) -> Self {
        Self {
            name: None,
            style: Overlay::Mask,
            seen: 0,
            placeholder,
        }
    }

    /// The tinting field's name, when set.
    pub(super) fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Tints by field `name` with its style, or stops tinting; true when the field changed
    /// (the page sets that bind it must be rewritten).
    pub(super) fn set(&mut self, overlay: Option<(&str, Overlay)>) -> bool {
        self.style = overlay.map_or(Overlay::Mask, |(_, s)| s);
        let name = overlay.map(|(n, _)| n);
        if self.name.as_deref() == name {
            return false;
        }
        self.name = name.map(str::to_string);
        self.seen = 0;
        true
    }

    /// The tinting field, when set and in `store`.
    pub(super) fn field<'s>(&self, store: &'s PageStore) -> Option<&'s Field> {
        self.name.as_deref().and_then(|n| store.field(n))
    }

    /// Brings the tinting field's pages of `drawn` (blocks the last frame drew) onto the GPU;
    /// returns its pages that changed since the last call.
    pub(super) fn catch_up(
        &mut self,
        store: &mut PageStore,
        blocks: Blocks,
        drawn: &BTreeSet<PageId>,
    ) -> Result<Vec<PageId>, PageError> {
        let Some(field) = self.name.as_deref().and_then(|n| store.field_mut(n)) else {
            return Ok(Vec::new());
        };
        let wanted: Vec<PageId> = drawn
            .iter()
            .flat_map(|&b| blocks.overlay_pages(b).map(|(_, id)| id))
            .collect();
        field.ensure_visible(&wanted)?;
        let (changed, epoch) = field.changes().changed_since(self.seen);
        self.seen = epoch;
        Ok(changed)
    }

    /// Declares that the draws read, from the vertex stage, the tinting field's pages of
    /// `drawn` (blocks) and the placeholder.
    pub(super) fn declare<'a>(
        &'a self,
        rec: &mut Recorder<'a>,
        store: &'a PageStore,
        blocks: Blocks,
        drawn: &BTreeSet<PageId>,
    ) {
        rec.image(&self.placeholder, Access::VertexStorageRead);
        let Some(field) = self.field(store) else {
            return;
        };
        for &b in drawn {
            for (_, id) in blocks.overlay_pages(b) {
                if let Some(img) = field.visible_image(id) {
                    rec.image(img, Access::VertexStorageRead);
                }
            }
        }
    }
}

//! The View panel's field map (drainage, wetness, profile or plan curvature, erosion's wear and
//! deposits; docs/maps.md): a tint field of the store. Profile and plan curvature are computed
//! on the GPU page by page and follow every edit at once ([`SurfaceField`], pages near the edit
//! only, at most [`PAGES_PER_FRAME`] a frame); the others are global (a texel's drainage depends
//! on everything upstream) and computed from the whole document (drainage counted on the GPU),
//! again after an edit once the heights have been still for a moment (a stroke is not
//! recomputed every frame).

use crate::document::Document;
use crate::maps::field::SurfaceField;
use crate::maps::overlay::{name, surface_map, EDITOR_MOST_TEXELS};
use crate::render::analysis::Overlay;
use crate::render::terrain::Overlay as Tint;
use std::time::{Duration, Instant};

/// The tint field's name in the store.
pub const FIELD: &str = "map overlay";
/// How long the heights stay unchanged before a global map follows them.
const SETTLE: Duration = Duration::from_millis(500);
/// Most pages of a surface map computed a frame (a new map on a large document fills in over
/// a few frames; an edit's pages come first only in that they are few).
pub const PAGES_PER_FRAME: usize = 64;

/// The map shown and what it was computed from.
#[derive(Default)]
pub struct FieldMap {
    /// The global map in the field, the height field's change epoch it was computed at, its
    /// tint.
    shown: Option<(Overlay, u64, Tint)>,
    /// The last epoch seen and when it was first seen.
    seen: Option<(u64, Instant)>,
    /// The surface map in the field, while one is shown.
    surface: Option<SurfaceField>,
}

impl FieldMap {
    /// Brings the field to map `want` of `doc` as it is (a surface map page by page as the
    /// heights change; a global map computed now when the map changed, or when the heights
    /// changed and have been still for [`SETTLE`]); returns the field to tint with (the last
    /// map computed while it waits), or why there is none.
    pub fn update(
        &mut self,
        want: Option<Overlay>,
        doc: &mut Document,
        now: Instant,
    ) -> Result<Option<(&'static str, Tint)>, String> {
        let surface = want.and_then(surface_map);
        if surface.is_none() && self.surface.take().is_some() {
            // The global maps write the field as an edit of their own.
            doc.store.remove_field(FIELD);
        }
        let Some(kind) = want else {
            self.shown = None;
            return Ok(None);
        };
        if let Some(map) = surface {
            if self.shown.take().is_some() {
                doc.store.remove_field(FIELD);
            }
            let err = |e: &dyn std::fmt::Display| format!("{}: {e}", name(kind));
            let format = doc.desc().format;
            if self.surface.as_ref().is_some_and(|f| f.format() != format) {
                self.surface = None;
            }
            let field = match &mut self.surface {
                Some(f) => f,
                None => self
                    .surface
                    .insert(SurfaceField::new(doc.gpu(), format, FIELD).map_err(|e| err(&e))?),
            };
            field
                .update(&mut doc.store, map, Some(PAGES_PER_FRAME))
                .map_err(|e| err(&e))?;
            return Ok(Some((FIELD, Tint::Uplift)));
        }
        let d = *doc.desc();
        if u64::from(d.width) * u64::from(d.height) > EDITOR_MOST_TEXELS {
            self.shown = None;
            return Err(format!(
                "a {}x{} document is past what the editor maps as it is edited (8192x8192): \
                 `scarp export --maps` or `scarp render --overlay` map it",
                d.width, d.height
            ));
        }
        let epoch = doc.height().changes().epoch();
        if self.seen.map(|(e, _)| e) != Some(epoch) {
            self.seen = Some((epoch, now));
        }
        let settled = self.seen.is_some_and(|(_, t)| now - t >= SETTLE);
        let stale = match self.shown {
            Some((k, e, _)) => k != kind || (e != epoch && settled),
            None => true,
        };
        if stale {
            let tint = compute(kind, doc).map_err(|e| format!("{}: {e:#}", name(kind)))?;
            self.shown = Some((kind, epoch, tint));
        }
        Ok(self.shown.map(|(_, _, tint)| (FIELD, tint)))
    }

    /// Pages of a surface map still to compute (0 for a global map).
    pub fn waiting(&self) -> usize {
        self.surface.as_ref().map_or(0, SurfaceField::pending)
    }
}

/// Writes map `kind` of `doc` into [`FIELD`] and brings its pages onto the GPU; returns how it
/// tints.
fn compute(kind: Overlay, doc: &mut Document) -> anyhow::Result<Tint> {
    doc.write_field_map(kind, FIELD)?
        .ok_or_else(|| anyhow::anyhow!("{}: not a field map", name(kind)))
}

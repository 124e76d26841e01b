//! The View panel's field map (drainage, wetness, profile or plan curvature, erosion's wear and
//! deposits; docs/maps.md): a tint field the editor computes on the CPU from the whole document,
//! again after an edit once the heights have been still for a moment (a stroke is not
//! recomputed every frame).

use crate::document::Document;
use crate::maps::overlay::{name, EDITOR_MOST_TEXELS};
use crate::render::analysis::Overlay;
use crate::render::terrain::Overlay as Tint;
use std::time::{Duration, Instant};

/// The tint field's name in the store.
pub const FIELD: &str = "map overlay";
/// How long the heights stay unchanged before the map follows them.
const SETTLE: Duration = Duration::from_millis(500);

/// The map shown and what it was computed from.
#[derive(Default)]
pub struct FieldMap {
    /// The map in the field, the height field's change epoch it was computed at, its tint.
    shown: Option<(Overlay, u64, Tint)>,
    /// The last epoch seen and when it was first seen.
    seen: Option<(u64, Instant)>,
}

impl FieldMap {
    /// Brings the field to map `want` of `doc` as it is (computed now when the map changed,
    /// or when the heights changed and have been still for [`SETTLE`]); returns the field to
    /// tint with (the last map computed while it waits), or why there is none.
    pub fn update(
        &mut self,
        want: Option<Overlay>,
        doc: &mut Document,
        now: Instant,
    ) -> Result<Option<(&'static str, Tint)>, String> {
        let Some(kind) = want else {
            self.shown = None;
            return Ok(None);
        };
        let d = *doc.desc();
        if u64::from(d.width) * u64::from(d.height) > EDITOR_MOST_TEXELS {
            self.shown = None;
            return Err(format!(
                "a {}x{} document is past what the editor maps as it is edited (4096x4096): \
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
}

/// Writes map `kind` of `doc` into [`FIELD`] and brings its pages onto the GPU; returns how it
/// tints.
fn compute(kind: Overlay, doc: &mut Document) -> anyhow::Result<Tint> {
    doc.write_field_map(kind, FIELD)?
        .ok_or_else(|| anyhow::anyhow!("{}: not a field map", name(kind)))
}

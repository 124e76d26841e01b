//! Where a stroke goes: the engine orders that paint one stroke (part) on the document's
//! selection. On the base or the geology uplift map, the stroke itself (on the map, `mask`
//! paints toward its value and `erase` back to unpainted); on a layer, its value (and on `max`, `min` and
//! `replace` layers a level stroke of alpha toward 1), or for the layer brushes its mask
//! (`mask`) or alpha and an `add` layer's value toward 0 (`erase`) (docs/layers.md).

use crate::brush::gpu::StrokeOrder;
use crate::brush::shared::BrushInstance;
use crate::brush::{BrushSettings, BrushType, Plane};
use crate::layers::{Mode, Part, Stack};

/// What a stroke on a layered document takes from the composite when it starts.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Routing {
    /// Level strokes: the composite height the stroke under way levels to.
    pub level_target: f32,
    /// Flatten and ramp strokes: the plane through the composite's heights under the stroke.
    pub plane: Option<Plane>,
}

impl Routing {
    /// The engine orders painting one stroke (part) of `brush` on the selection of `layers`
    /// (the base is field `base`); `layered`: whether the document has layers (then the
    /// stroke's level target and plane come from the composite).
    pub(super) fn orders(
        &self,
        layers: &Stack,
        layered: bool,
        base: &str,
        brush: &BrushSettings,
        instances: &[BrushInstance],
        join: bool,
    ) -> Vec<StrokeOrder> {
        let level = (layered && brush.brush == BrushType::Level).then_some(self.level_target);
        let plane = self.plane.filter(|_| layered);
        let order = |field: String,
                     b: BrushSettings,
                     instances: Vec<BrushInstance>,
                     target: Option<f32>| {
            StrokeOrder {
                field,
                // Only the stroke's own brush takes the plane (not the level strokes of alpha).
                plane: plane.filter(|_| b.brush.is_plane()),
                brush: b,
                instances,
                join,
                level_target: target,
                weight: None,
            }
        };
        // A level stroke of `brush`'s shape toward `target` (strengths as given, or 1).
        let toward = |target: f32, full: bool| {
            let mut b = brush.clone();
            b.brush = BrushType::Level;
            let mut inst = instances.to_vec();
            if full {
                b.strength = 1.0;
                for i in &mut inst {
                    i.strength = 1.0;
                }
            }
            (b, inst, Some(target))
        };
        if layers.paints_uplift() {
            // The mask brush paints the map toward its value, erase back to unpainted.
            let (b, i, t) = match brush.brush {
                BrushType::Mask => toward(brush.value, false),
                BrushType::Erase => toward(crate::geology::UPLIFT_UNPAINTED, false),
                _ => (brush.clone(), instances.to_vec(), None),
            };
            return vec![order(crate::geology::UPLIFT_FIELD.to_string(), b, i, t)];
        }
        let Some(layer) = layers.selected_layer() else {
            return vec![order(
                base.to_string(),
                brush.clone(),
                instances.to_vec(),
                level,
            )];
        };
        let mut out = Vec::new();
        match brush.brush {
            BrushType::Mask => {
                let (mut b, i, t) = toward(brush.value, false);
                b.rules = None;
                let mut o = order(layer.field(Part::Mask), b, i, t);
                if brush.rules.is_some() {
                    o.weight = Some(crate::layers::composite::RULES_WEIGHT.to_string());
                }
                out.push(o);
            }
            BrushType::Erase => {
                let (b, i, t) = toward(0.0, false);
                if layer.mode == Mode::Add {
                    out.push(order(layer.field(Part::Value), b.clone(), i.clone(), t));
                }
                out.push(order(layer.field(Part::Alpha), b, i, t));
            }
            _ => {
                out.push(order(
                    layer.field(Part::Value),
                    brush.clone(),
                    instances.to_vec(),
                    level,
                ));
                if layer.mode.reveals() {
                    let (b, i, t) = toward(1.0, true);
                    out.push(order(layer.field(Part::Alpha), b, i, t));
                }
            }
        }
        out
    }
}

//! The layers panel: the stack top first, each row a visibility eye, a lock, the name (click to
//! select, drag to reorder), mode and opacity; buttons to add, duplicate, delete, merge down and
//! rename; solo view; the mask tint. Every change is a [`LayerOp`] action (one undo step), except
//! solo and the tint, which are view settings.

use super::actions::UiAction;
use super::widgets::{measure_fit, panel, tip};
use crate::layers::{Changes, Layer, LayerFiles, LayerOp, Mode, Stack, BASE};
use imgui::{DragDropFlags, Ui};

/// Drag-and-drop payload type of a layer row.
const ROW: &str = "scarp-layer";

/// What the layers panel keeps between frames.
#[derive(Clone, Debug)]
pub struct LayersUi {
    /// The document's stack as of this frame (the editor copies it in).
    pub stack: Stack,
    /// Mode of the next layer added.
    pub new_mode: Mode,
    /// Name typed for a rename.
    pub rename: String,
    /// Opacity being dragged (layer id, value): sent as one step when the slider is released.
    pub dragging: Option<(u32, f32)>,
    /// Solo view: only the selected layer folded onto the base.
    pub solo: bool,
    /// Procedural mask: (enabled, [lo, hi, soft]) of the height, slope and curvature bands.
    pub rules: [(bool, [f32; 3]); 3],
    /// The mask brush is filtered by these rules.
    pub brush_rules: bool,
    /// Tint the viewport by the selected layer's mask (always on while the mask brush is chosen).
    pub show_mask: bool,
}

impl LayersUi {
    /// The field the viewport tints by: the selected layer's mask of `stack` while `brush` is
    /// the mask brush or the panel shows the mask.
    pub fn overlay(&self, stack: &Stack, brush: crate::brush::BrushType) -> Option<String> {
        let layer = stack.selected_layer()?;
        let painting = brush == crate::brush::BrushType::Mask;
        (painting || self.show_mask).then(|| layer.field(crate::layers::Part::Mask))
    }
}

impl LayersUi {
    /// The procedural mask rules as set in the panel.
    pub fn mask_rules(&self) -> crate::layers::MaskRules {
        let band = |(on, b): (bool, [f32; 3])| {
            on.then_some(crate::layers::Band {
                lo: b[0],
                hi: b[1],
                soft: b[2],
            })
        };
        crate::layers::MaskRules {
            height: band(self.rules[0]),
            slope: None,
            slope_degrees: band(self.rules[1]),
            curvature: band(self.rules[2]),
        }
    }
}

impl Default for LayersUi {
    fn default() -> Self {
        Self {
            stack: Stack::default(),
            new_mode: Mode::Add,
            rename: String::new(),
            dragging: None,
            solo: false,
            rules: [
                (true, [0.5, 1.0, 0.05]),
                (true, [0.0, 30.0, 5.0]),
                (false, [-0.01, 0.0, 0.002]),
            ],
            brush_rules: false,
            show_mask: false,
        }
    }
}

fn set(name: &str, changes: Changes) -> UiAction {
    UiAction::Layer(LayerOp::Set {
        name: name.to_string(),
        changes,
    })
}

/// Asks for a new layer of the panel's mode on top, selected (the button, Ctrl+Shift+N).
pub fn add_layer(l: &LayersUi, actions: &mut Vec<UiAction>) {
    let name = l.stack.new_layer_name();
    actions.push(UiAction::Layer(LayerOp::Add {
        name: name.clone(),
        mode: l.new_mode,
        opacity: 1.0,
        files: LayerFiles::default(),
    }));
    actions.push(UiAction::Layer(LayerOp::Select { name }));
}

/// The layers panel over `l`; its requests go to `actions`, what does not fit to `overflow`.
pub fn layers_panel(
    ui: &Ui,
    l: &mut LayersUi,
    actions: &mut Vec<UiAction>,
    overflow: &mut Vec<String>,
) {
    panel(ui, "Layers").build(|| {
        let modes: Vec<&str> = Mode::ALL.iter().map(|m| m.name()).collect();
        new_layer_row(ui, l, &modes, actions);
        ui.separator();
        let selected = l.stack.selected_layer().map(|x| x.id);
        let count = l.stack.layers.len();
        for i in (0..count).rev() {
            layer_row(ui, l, i, selected, &modes, actions);
        }
        if ui
            .selectable_config("base")
            .selected(l.stack.selected == crate::layers::Selection::Base)
            .build()
        {
            actions.push(UiAction::Layer(LayerOp::Select {
                name: BASE.to_string(),
            }));
        }
        if ui
            .selectable_config("uplift map (geology)")
            .selected(l.stack.paints_uplift())
            .build()
        {
            actions.push(UiAction::Layer(LayerOp::Select {
                name: crate::layers::UPLIFT.to_string(),
            }));
        }
        tip(ui, "Strokes paint how fast the rock rises for the Geology panel's runs (1: the rate; orange above, teal below)");
        ui.separator();
        let Some(sel) = l.stack.selected_layer().cloned() else {
            ui.text_disabled("select a layer to rename, duplicate, merge or delete it");
            return;
        };
        selection_controls(ui, l, &sel, actions);
        measure_fit(ui, "Layers", overflow);
    });
}

/// The mode of the next layer, adding it, solo view and the mask tint.
fn new_layer_row(ui: &Ui, l: &mut LayersUi, modes: &[&str], actions: &mut Vec<UiAction>) {
    let mut mi = Mode::ALL.iter().position(|m| *m == l.new_mode).unwrap_or(0);
    ui.set_next_item_width(90.0);
    if ui.combo_simple_string("##new mode", &mut mi, modes) {
        l.new_mode = Mode::ALL[mi];
    }
    tip(
        ui,
        "How the new layer combines with those below: add, max, min or replace",
    );
    ui.same_line();
    if ui.button("add layer") {
        add_layer(l, actions);
    }
    tip(
        ui,
        "A new layer of this mode over the others, selected (Ctrl+Shift+N)",
    );
    ui.same_line();
    if ui.checkbox("solo", &mut l.solo) {
        actions.push(UiAction::Solo(l.solo));
    }
    tip(ui, "Show only the selected layer over the base");
    ui.same_line();
    ui.checkbox("mask tint", &mut l.show_mask);
    tip(
        ui,
        "tint where the selected layer's mask hides it (always on with the mask brush)",
    );
}

/// Layer `i`'s row: visible, locked, its name (click to select, drag to reorder), mode and
/// opacity; `selected`: the selected layer's id.
fn layer_row(
    ui: &Ui,
    l: &mut LayersUi,
    i: usize,
    selected: Option<u32>,
    modes: &[&str],
    actions: &mut Vec<UiAction>,
) {
    let layer = l.stack.layers[i].clone();
    let _id = ui.push_id_usize(layer.id as usize);
    let mut visible = layer.visible;
    if ui.checkbox("##eye", &mut visible) {
        actions.push(set(
            &layer.name,
            Changes {
                visible: Some(visible),
                ..Default::default()
            },
        ));
    }
    tip(ui, "visible");
    ui.same_line();
    let mut locked = layer.locked;
    if ui.checkbox("##lock", &mut locked) {
        actions.push(set(
            &layer.name,
            Changes {
                locked: Some(locked),
                ..Default::default()
            },
        ));
    }
    tip(ui, "locked");
    ui.same_line();
    let label = format!(
        "{}{}",
        layer.name,
        if layer.locked { " (locked)" } else { "" }
    );
    if ui
        .selectable_config(&label)
        .selected(selected == Some(layer.id))
        .size([120.0, 0.0])
        .build()
    {
        actions.push(UiAction::Layer(LayerOp::Select {
            name: layer.name.clone(),
        }));
    }
    if let Some(tip) = ui.drag_drop_source_config(ROW).begin_payload(i) {
        ui.text(format!("move {}", layer.name));
        tip.end();
    }
    if let Some(target) = ui.drag_drop_target() {
        if let Some(Ok(p)) = target.accept_payload::<usize, _>(ROW, DragDropFlags::empty()) {
            if let Some(moved) = l.stack.layers.get(p.data) {
                if p.data != i {
                    actions.push(UiAction::Layer(LayerOp::Move {
                        name: moved.name.clone(),
                        index: i,
                    }));
                }
            }
        }
        target.pop();
    }
    ui.same_line();
    let mut m = Mode::ALL.iter().position(|x| *x == layer.mode).unwrap_or(0);
    ui.set_next_item_width(70.0);
    if ui.combo_simple_string("##mode", &mut m, modes) {
        actions.push(set(
            &layer.name,
            Changes {
                mode: Some(Mode::ALL[m]),
                ..Default::default()
            },
        ));
    }
    tip(ui, "How the layer combines with those below");
    ui.same_line();
    let mut o = match l.dragging {
        Some((id, v)) if id == layer.id => v,
        _ => layer.opacity,
    };
    ui.set_next_item_width(-1.0);
    if ui.slider("##opacity", 0.0, 1.0, &mut o) {
        l.dragging = Some((layer.id, o));
    }
    tip(ui, "How much of the layer shows");
    if ui.is_item_deactivated_after_edit() {
        l.dragging = None;
        actions.push(set(
            &layer.name,
            Changes {
                opacity: Some(o.clamp(0.0, 1.0)),
                ..Default::default()
            },
        ));
    }
}

/// What the selected layer `sel` can have done: duplicate, merge down, delete, its
/// procedural mask and rename.
fn selection_controls(ui: &Ui, l: &mut LayersUi, sel: &Layer, actions: &mut Vec<UiAction>) {
    if ui.button("duplicate") {
        let rename = l.stack.free_name(&format!("{} copy", sel.name));
        actions.push(UiAction::Layer(LayerOp::Duplicate {
            name: sel.name.clone(),
            rename,
        }));
    }
    ui.same_line();
    if ui.button("merge down") {
        actions.push(UiAction::Layer(LayerOp::MergeDown {
            name: sel.name.clone(),
        }));
    }
    ui.same_line();
    if ui.button("delete") {
        actions.push(UiAction::Layer(LayerOp::Delete {
            name: sel.name.clone(),
        }));
    }
    if ui.collapsing_header("procedural mask", imgui::TreeNodeFlags::empty()) {
        ui.text_wrapped(
            "fills the mask from the height below the layer: lo, hi, soft edge of each band \
                 (slope: true degrees of the ground; curvature: the 5-point Laplacian, < 0 \
                 on ridges); \
                 the mask brush can paint only where these rules allow",
        );
        for (label, (on, band)) in ["height", "slope (deg)", "curvature"]
            .iter()
            .zip(&mut l.rules)
        {
            ui.checkbox(format!("##{label} on"), on);
            ui.same_line();
            ui.input_float3(label, band).build();
        }
        if ui.button("fill mask") {
            actions.push(UiAction::Layer(LayerOp::FillMask {
                name: sel.name.clone(),
                rules: l.mask_rules(),
            }));
        }
        ui.same_line();
        ui.checkbox("mask brush uses them", &mut l.brush_rules);
        tip(ui, "The mask brush paints only where these bands allow");
    }
    ui.set_next_item_width(160.0);
    ui.input_text("##rename", &mut l.rename).build();
    ui.same_line();
    if ui.button("rename") && !l.rename.is_empty() {
        actions.push(set(
            &sel.name,
            Changes {
                rename: Some(l.rename.clone()),
                ..Default::default()
            },
        ));
    }
}

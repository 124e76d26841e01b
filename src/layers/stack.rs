//! The layer stack as data: each layer's name, mode, opacity, visibility and lock, which one is
//! selected, the operations that change the stack ([`LayerOp`], checked before they run), and
//! the CPU twin of the composite (`blend`, [`fold_texel`]). The layers' values live in page-store
//! fields named by [`Layer::field`]; this file never touches them.

use serde::{Deserialize, Serialize};

/// How a layer folds into the height below it (`h`), with weight `w` and value `V`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// `h + w·V`
    Add,
    /// `h + w·max(V − h, 0)`
    Max,
    /// `h + w·min(V − h, 0)`
    Min,
    /// `h + w·(V − h)`
    Replace,
}

impl Mode {
    pub const ALL: [Mode; 4] = [Mode::Add, Mode::Max, Mode::Min, Mode::Replace];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Add => "add",
            Mode::Max => "max",
            Mode::Min => "min",
            Mode::Replace => "replace",
        }
    }

    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == s)
    }

    /// `LAYER_*` of `src/shared_constants.rs`.
    pub fn index(self) -> i32 {
        use crate::shared_constants as k;
        match self {
            Mode::Add => k::LAYER_ADD,
            Mode::Max => k::LAYER_MAX,
            Mode::Min => k::LAYER_MIN,
            Mode::Replace => k::LAYER_REPLACE,
        }
    }

    /// Alpha where a new layer of this mode was never painted: 1 for `add` (the whole layer
    /// counts), 0 for the others (painting reveals them).
    pub fn default_alpha(self) -> f32 {
        if self == Mode::Add {
            1.0
        } else {
            0.0
        }
    }

    /// Whether painting the layer's value also reveals it (raises alpha by the falloff).
    pub fn reveals(self) -> bool {
        self != Mode::Add
    }
}

/// One of a layer's three fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Part {
    Value,
    Alpha,
    Mask,
}

impl Part {
    pub const ALL: [Part; 3] = [Part::Value, Part::Alpha, Part::Mask];

    pub fn name(self) -> &'static str {
        match self {
            Part::Value => "value",
            Part::Alpha => "alpha",
            Part::Mask => "mask",
        }
    }

    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == s)
    }

    /// The value of a page never written, for a layer of `mode` when it was made.
    pub fn default_value(self, mode: Mode) -> f32 {
        match self {
            Part::Value => 0.0,
            Part::Alpha => mode.default_alpha(),
            Part::Mask => 1.0,
        }
    }
}

/// One layer's settings. Its fields are named after `id`, which never changes (names do).
#[derive(Clone, Debug, PartialEq)]
pub struct Layer {
    pub id: u32,
    pub name: String,
    pub mode: Mode,
    pub opacity: f32,
    pub visible: bool,
    pub locked: bool,
}

impl Layer {
    /// The page-store field holding `part` of this layer.
    pub fn field(&self, part: Part) -> String {
        field_name(self.id, part)
    }

    /// visible · opacity: the factor of its texels' `A·M`.
    pub fn weight(&self) -> f32 {
        if self.visible {
            self.opacity
        } else {
            0.0
        }
    }
}

/// The page-store field of `part` of layer `id`.
pub fn field_name(id: u32, part: Part) -> String {
    format!("layer{id}.{}", part.name())
}

/// Which field strokes paint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection {
    Base,
    /// The layer with this id.
    Layer(u32),
    /// The geology uplift map ([`UPLIFT`], docs/geology.md): strokes paint how fast the rock
    /// rises, 1 where unpainted.
    Uplift,
}

/// The ordered layers above the base (bottom first) and the selection.
#[derive(Clone, Debug, PartialEq)]
pub struct Stack {
    pub layers: Vec<Layer>,
    pub selected: Selection,
    /// Id of the next layer made (ids are never reused, so undo can bring fields back).
    pub next_id: u32,
}

impl Default for Stack {
    fn default() -> Self {
        Self {
            layers: Vec::new(),
            selected: Selection::Base,
            next_id: 0,
        }
    }
}

/// The name that selects the base.
pub const BASE: &str = "base";

/// The name that selects the geology uplift map (a `select` step's name; no new layer takes
/// it, and where an older project has a layer of that name, `select` still means the map).
pub const UPLIFT: &str = "uplift";

/// What a layer step does (journal `{"layer": {"op": …}}`, the editor's layers panel).
#[derive(Clone, Debug, PartialEq)]
pub enum LayerOp {
    /// A new layer on top; its fields start from the files given, else their defaults.
    Add {
        name: String,
        mode: Mode,
        opacity: f32,
        files: LayerFiles,
    },
    /// Strokes paint this layer ("base": the base).
    Select {
        name: String,
    },
    Set {
        name: String,
        changes: Changes,
    },
    /// To position `index` (0: just above the base).
    Move {
        name: String,
        index: usize,
    },
    Delete {
        name: String,
    },
    /// Folds the layer into the one below it (the base, or a layer) and deletes it.
    MergeDown {
        name: String,
    },
    /// A copy of the layer (settings and fields) just above it, named `rename`.
    Duplicate {
        name: String,
        rename: String,
    },
    /// Fills the layer's mask from the height below it by height, slope and curvature bands
    /// (a procedural mask, [`super::rules`]).
    FillMask {
        name: String,
        rules: super::rules::MaskRules,
    },
}

/// What a `set` step changes (None: left as it is).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Changes {
    pub opacity: Option<f32>,
    pub visible: Option<bool>,
    pub mode: Option<Mode>,
    pub locked: Option<bool>,
    pub rename: Option<String>,
}

/// Height files a new layer starts from (paths as written, resolved by the reader).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LayerFiles {
    pub value: Option<String>,
    pub alpha: Option<String>,
    pub mask: Option<String>,
}

impl LayerOp {
    /// The layer the step names.
    pub fn name(&self) -> &str {
        match self {
            LayerOp::Add { name, .. }
            | LayerOp::Select { name }
            | LayerOp::Set { name, .. }
            | LayerOp::Move { name, .. }
            | LayerOp::Delete { name }
            | LayerOp::MergeDown { name }
            | LayerOp::Duplicate { name, .. }
            | LayerOp::FillMask { name, .. } => name,
        }
    }

    pub fn op_name(&self) -> &'static str {
        match self {
            LayerOp::Add { .. } => "add",
            LayerOp::Select { .. } => "select",
            LayerOp::Set { .. } => "set",
            LayerOp::Move { .. } => "move",
            LayerOp::Delete { .. } => "delete",
            LayerOp::MergeDown { .. } => "merge_down",
            LayerOp::Duplicate { .. } => "duplicate",
            LayerOp::FillMask { .. } => "fill_mask",
        }
    }
}

/// Why a layer step cannot run: the field it names and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct OpError {
    pub field: &'static str,
    pub problem: String,
}

fn op_error(field: &'static str, problem: impl Into<String>) -> OpError {
    OpError {
        field,
        problem: problem.into(),
    }
}

fn check_name(field: &'static str, name: &str) -> Result<(), OpError> {
    if name.is_empty() || name.len() > 64 || name.chars().any(char::is_control) {
        return Err(op_error(
            field,
            format!("a layer name is 1 to 64 printable characters, got {name:?}"),
        ));
    }
    if name == BASE {
        return Err(op_error(field, "\"base\" names the base, not a layer"));
    }
    Ok(())
}

/// A name a new or renamed layer may take: a valid name, and not [`UPLIFT`].
fn check_new_name(field: &'static str, name: &str) -> Result<(), OpError> {
    check_name(field, name)?;
    if name == UPLIFT {
        return Err(op_error(
            field,
            "\"uplift\" names the geology uplift map, not a layer",
        ));
    }
    Ok(())
}

fn check_opacity(o: f32) -> Result<(), OpError> {
    if !(o.is_finite() && (0.0..=1.0).contains(&o)) {
        return Err(op_error("opacity", format!("must be in [0, 1], got {o}")));
    }
    Ok(())
}

impl Stack {
    /// The fields of the layers, bottom layer first, value, alpha, mask each.
    pub fn field_names(&self) -> Vec<String> {
        self.layers
            .iter()
            .flat_map(|l| Part::ALL.map(|p| l.field(p)))
            .collect()
    }

    /// Index of the layer called `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.layers.iter().position(|l| l.name == name)
    }

    /// The layer with id `id`.
    pub fn by_id(&self, id: u32) -> Option<&Layer> {
        self.layers.iter().find(|l| l.id == id)
    }

    /// What strokes paint, as a `select` step names it ("base", "uplift" or a layer's name).
    pub fn selected_name(&self) -> &str {
        match (self.selected, self.selected_layer()) {
            (Selection::Uplift, _) => UPLIFT,
            (_, Some(l)) => &l.name,
            (_, None) => BASE,
        }
    }

    /// Whether strokes paint the geology uplift map.
    pub fn paints_uplift(&self) -> bool {
        self.selected == Selection::Uplift
    }

    /// Index of the selected layer (None: the base or the uplift map).
    pub fn selected_index(&self) -> Option<usize> {
        match self.selected {
            Selection::Base | Selection::Uplift => None,
            Selection::Layer(id) => self.layers.iter().position(|l| l.id == id),
        }
    }

    /// The selected layer (None: the base or the uplift map).
    pub fn selected_layer(&self) -> Option<&Layer> {
        self.selected_index().map(|i| &self.layers[i])
    }

    fn existing(&self, name: &str) -> Result<usize, OpError> {
        self.index_of(name)
            .ok_or_else(|| op_error("name", format!("no layer is called {name:?}")))
    }

    /// Checks `op` against the stack: names that exist (or don't, for new ones), values in
    /// range. Nothing changes.
    pub fn check(&self, op: &LayerOp) -> Result<(), OpError> {
        match op {
            LayerOp::Add { name, opacity, .. } => {
                check_new_name("name", name)?;
                if self.index_of(name).is_some() {
                    return Err(op_error(
                        "name",
                        format!("a layer is already called {name:?}"),
                    ));
                }
                check_opacity(*opacity)
            }
            LayerOp::Select { name } if name == BASE || name == UPLIFT => Ok(()),
            LayerOp::Select { name } | LayerOp::Delete { name } => self.existing(name).map(|_| ()),
            LayerOp::Set { name, changes } => {
                self.existing(name)?;
                let rename = &changes.rename;
                if let Some(o) = changes.opacity {
                    check_opacity(o)?;
                }
                if let Some(r) = rename {
                    check_new_name("rename", r)?;
                    if r != name && self.index_of(r).is_some() {
                        return Err(op_error(
                            "rename",
                            format!("a layer is already called {r:?}"),
                        ));
                    }
                }
                Ok(())
            }
            LayerOp::Move { name, index } => {
                self.existing(name)?;
                if *index >= self.layers.len() {
                    return Err(op_error(
                        "index",
                        format!(
                            "must be below the number of layers ({}), got {index}",
                            self.layers.len()
                        ),
                    ));
                }
                Ok(())
            }
            LayerOp::MergeDown { name } => {
                let i = self.existing(name)?;
                if self.layers[i].locked {
                    return Err(op_error("name", format!("layer {name:?} is locked")));
                }
                if i > 0 && self.layers[i - 1].locked {
                    return Err(op_error(
                        "name",
                        format!("the layer below {name:?} is locked"),
                    ));
                }
                Ok(())
            }
            LayerOp::FillMask { name, rules } => {
                let i = self.existing(name)?;
                if self.layers[i].locked {
                    return Err(op_error("name", format!("layer {name:?} is locked")));
                }
                rules.check().map_err(|e| op_error("rules", e))
            }
            LayerOp::Duplicate { name, rename } => {
                self.existing(name)?;
                check_new_name("rename", rename)?;
                if self.index_of(rename).is_some() {
                    return Err(op_error(
                        "rename",
                        format!("a layer is already called {rename:?}"),
                    ));
                }
                Ok(())
            }
        }
    }

    /// Changes the settings `op` changes (after [`Self::check`]); returns the new layer's id
    /// for `add` and `duplicate`. Fields are the caller's: `add` and `duplicate` need new ones,
    /// `merge_down` a fold of values first.
    pub fn apply(&mut self, op: &LayerOp) -> Option<u32> {
        match op {
            LayerOp::Add {
                name,
                mode,
                opacity,
                ..
            } => {
                let id = self.next_id;
                self.next_id += 1;
                self.layers.push(Layer {
                    id,
                    name: name.clone(),
                    mode: *mode,
                    opacity: *opacity,
                    visible: true,
                    locked: false,
                });
                return Some(id);
            }
            LayerOp::Select { name } => {
                self.selected = match self.index_of(name) {
                    _ if name == UPLIFT => Selection::Uplift,
                    Some(i) => Selection::Layer(self.layers[i].id),
                    None => Selection::Base,
                };
            }
            LayerOp::Set { name, changes } => {
                let i = self.index_of(name)?;
                let l = &mut self.layers[i];
                l.opacity = changes.opacity.unwrap_or(l.opacity);
                l.visible = changes.visible.unwrap_or(l.visible);
                l.mode = changes.mode.unwrap_or(l.mode);
                l.locked = changes.locked.unwrap_or(l.locked);
                if let Some(r) = &changes.rename {
                    l.name = r.clone();
                }
            }
            LayerOp::Move { name, index } => {
                let i = self.index_of(name)?;
                let l = self.layers.remove(i);
                self.layers.insert(*index, l);
            }
            LayerOp::Delete { name } | LayerOp::MergeDown { name } => {
                let i = self.index_of(name)?;
                let l = self.layers.remove(i);
                if self.selected == Selection::Layer(l.id) {
                    self.selected = match i.checked_sub(1) {
                        Some(b) => Selection::Layer(self.layers[b].id),
                        None => Selection::Base,
                    };
                }
            }
            LayerOp::FillMask { .. } => {}
            LayerOp::Duplicate { name, rename } => {
                let i = self.index_of(name)?;
                let id = self.next_id;
                self.next_id += 1;
                let mut copy = self.layers[i].clone();
                copy.id = id;
                copy.name = rename.clone();
                copy.locked = false;
                self.layers.insert(i + 1, copy);
                return Some(id);
            }
        }
        None
    }

    /// The stack as solo view shows it: every layer but the selected one hidden.
    pub fn solo_view(&self) -> Stack {
        let mut s = self.clone();
        let keep = self.selected_layer().map(|l| l.id);
        for l in &mut s.layers {
            if Some(l.id) != keep {
                l.visible = false;
            }
        }
        s
    }

    /// The name a new layer gets: "Layer N", N the first number past the layer count that no
    /// layer has (a deleted layer's number is not taken again while a later one exists).
    pub fn new_layer_name(&self) -> String {
        (self.layers.len() + 1..)
            .map(|n| format!("Layer {n}"))
            .find(|n| self.index_of(n).is_none())
            .expect("some name is free")
    }

    /// A name for a new layer not taken yet: `base_name`, else `base_name 2`, `base_name 3`, …
    pub fn free_name(&self, base_name: &str) -> String {
        (1..)
            .map(|n| {
                if n == 1 {
                    base_name.to_string()
                } else {
                    format!("{base_name} {n}")
                }
            })
            .find(|n| self.index_of(n).is_none())
            .expect("some name is free")
    }
}

/// A stack as a project stores it (the layers' fields are stored beside it, named by id).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StackFile {
    pub layers: Vec<LayerFile>,
    /// Id of the selected layer; None: the base.
    pub selected: Option<u32>,
    pub next_id: u32,
}

/// One layer's settings as a project stores them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayerFile {
    pub id: u32,
    pub name: String,
    pub mode: String,
    pub opacity: f32,
    pub visible: bool,
    pub locked: bool,
}

impl Stack {
    /// The stack as a project stores it.
    pub fn to_file(&self) -> StackFile {
        StackFile {
            layers: self
                .layers
                .iter()
                .map(|l| LayerFile {
                    id: l.id,
                    name: l.name.clone(),
                    mode: l.mode.name().to_string(),
                    opacity: l.opacity,
                    visible: l.visible,
                    locked: l.locked,
                })
                .collect(),
            selected: self.selected_layer().map(|l| l.id),
            next_id: self.next_id,
        }
    }
}

impl StackFile {
    /// The checked stack: names valid and unique, modes known, opacities in [0, 1], ids unique
    /// and below `next_id`, the selection a layer of the stack.
    pub fn check(&self) -> Result<Stack, String> {
        let mut stack = Stack {
            next_id: self.next_id,
            ..Stack::default()
        };
        for (i, l) in self.layers.iter().enumerate() {
            let at = |p: String| format!("layers[{i}]: {p}");
            check_name("name", &l.name).map_err(|e| at(e.to_string()))?;
            check_opacity(l.opacity).map_err(|e| at(e.to_string()))?;
            let mode = Mode::from_name(&l.mode)
                .ok_or_else(|| at(format!("mode: unknown mode '{}'", l.mode)))?;
            if l.id >= self.next_id || stack.by_id(l.id).is_some() {
                return Err(at(format!("id {} is repeated or not below next_id", l.id)));
            }
            if stack.index_of(&l.name).is_some() {
                return Err(at(format!("name {:?} is repeated", l.name)));
            }
            stack.layers.push(Layer {
                id: l.id,
                name: l.name.clone(),
                mode,
                opacity: l.opacity,
                visible: l.visible,
                locked: l.locked,
            });
        }
        stack.selected = match self.selected {
            None => Selection::Base,
            Some(id) if stack.by_id(id).is_some() => Selection::Layer(id),
            Some(id) => return Err(format!("selected: no layer has id {id}")),
        };
        Ok(stack)
    }
}

/// One layer folded into height `h` with weight `w` = visible·opacity·A·M (CPU twin of
/// `fold_body.glsl`'s blend; no fused multiply-adds).
pub fn blend(mode: Mode, w: f32, v: f32, h: f32) -> f32 {
    let d = match mode {
        Mode::Add => v,
        Mode::Max => (v - h).max(0.0),
        Mode::Min => (v - h).min(0.0),
        Mode::Replace => v - h,
    };
    h + w * d
}

/// The texel weight `visible·opacity·A·M`, multiplied in the kernel's order.
pub fn texel_weight(layer_weight: f32, a: f32, m: f32) -> f32 {
    layer_weight * a * m
}

/// The composite at one texel: base `h`, then each layer's (mode, visible·opacity, V, A, M) in
/// stack order.
pub fn fold_texel(h: f32, layers: impl IntoIterator<Item = (Mode, f32, [f32; 3])>) -> f32 {
    layers.into_iter().fold(h, |h, (mode, weight, [v, a, m])| {
        blend(mode, texel_weight(weight, a, m), v, h)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(stack: &mut Stack, name: &str, mode: Mode) -> u32 {
        let op = LayerOp::Add {
            name: name.into(),
            mode,
            opacity: 1.0,
            files: LayerFiles::default(),
        };
        stack.check(&op).unwrap();
        stack.apply(&op).unwrap()
    }

    #[test]
    fn modes_follow_the_formulas() {
        let h = 10.0;
        assert_eq!(blend(Mode::Add, 0.5, 4.0, h), 12.0);
        assert_eq!(blend(Mode::Max, 0.5, 14.0, h), 12.0);
        assert_eq!(blend(Mode::Max, 0.5, 4.0, h), 10.0);
        assert_eq!(blend(Mode::Min, 0.5, 4.0, h), 7.0);
        assert_eq!(blend(Mode::Min, 0.5, 14.0, h), 10.0);
        assert_eq!(blend(Mode::Replace, 0.25, 14.0, h), 11.0);
        // Hidden or zero-weight layers leave the height alone.
        assert_eq!(fold_texel(h, [(Mode::Replace, 0.0, [99.0, 1.0, 1.0])]), h);
    }

    #[test]
    fn ops_are_checked_by_name_and_field() {
        let mut s = Stack::default();
        add(&mut s, "ridges", Mode::Max);
        add(&mut s, "dunes", Mode::Add);
        let dup = LayerOp::Add {
            name: "ridges".into(),
            mode: Mode::Add,
            opacity: 1.0,
            files: LayerFiles::default(),
        };
        assert_eq!(s.check(&dup).unwrap_err().field, "name");
        let bad = LayerOp::Set {
            name: "ridges".into(),
            changes: Changes {
                opacity: Some(1.5),
                ..Default::default()
            },
        };
        assert_eq!(s.check(&bad).unwrap_err().field, "opacity");
        let clash = LayerOp::Set {
            name: "ridges".into(),
            changes: Changes {
                rename: Some("dunes".into()),
                ..Default::default()
            },
        };
        assert_eq!(s.check(&clash).unwrap_err().field, "rename");
        let far = LayerOp::Move {
            name: "ridges".into(),
            index: 2,
        };
        assert_eq!(s.check(&far).unwrap_err().field, "index");
        let missing = LayerOp::Delete {
            name: "cliffs".into(),
        };
        assert!(s.check(&missing).unwrap_err().problem.contains("cliffs"));
        // Moving, selecting and deleting keep the selection on a layer that exists.
        let mv = LayerOp::Move {
            name: "dunes".into(),
            index: 0,
        };
        s.check(&mv).unwrap();
        s.apply(&mv);
        assert_eq!(s.layers[0].name, "dunes");
        let sel = LayerOp::Select {
            name: "ridges".into(),
        };
        s.apply(&sel);
        assert_eq!(s.selected_layer().unwrap().name, "ridges");
        s.apply(&LayerOp::Delete {
            name: "ridges".into(),
        });
        assert_eq!(s.selected_layer().unwrap().name, "dunes");
        assert_eq!(s.free_name("dunes"), "dunes 2");
    }

    #[test]
    fn uplift_selects_the_map_and_no_new_layer_takes_its_name() {
        let mut s = Stack::default();
        add(&mut s, "ridges", Mode::Max);
        let select = |name: &str| LayerOp::Select { name: name.into() };
        s.check(&select(UPLIFT)).unwrap();
        s.apply(&select(UPLIFT));
        assert!(s.paints_uplift());
        assert_eq!(s.selected_layer(), None);
        assert_eq!(s.selected_name(), UPLIFT);
        // Saved as the base: the selection is a session's, the map is stored beside the base.
        assert_eq!(s.to_file().selected, None);
        s.apply(&select("ridges"));
        assert_eq!(s.selected_name(), "ridges");
        let taken = |op: LayerOp| s.check(&op).unwrap_err().problem;
        let add_uplift = LayerOp::Add {
            name: UPLIFT.into(),
            mode: Mode::Add,
            opacity: 1.0,
            files: LayerFiles::default(),
        };
        assert!(taken(add_uplift).contains("uplift map"));
        let rename = LayerOp::Set {
            name: "ridges".into(),
            changes: Changes {
                rename: Some(UPLIFT.into()),
                ..Default::default()
            },
        };
        assert!(taken(rename).contains("uplift map"));
        let dup = LayerOp::Duplicate {
            name: "ridges".into(),
            rename: UPLIFT.into(),
        };
        assert!(taken(dup).contains("uplift map"));
        // An older project's layer of that name still opens.
        let mut file = s.to_file();
        file.layers[0].name = UPLIFT.into();
        assert!(file.check().is_ok());
    }

    #[test]
    fn new_layers_are_named_layer_n() {
        let mut s = Stack::default();
        let add = |s: &mut Stack| {
            let name = s.new_layer_name();
            s.apply(&LayerOp::Add {
                name: name.clone(),
                mode: Mode::Add,
                opacity: 1.0,
                files: LayerFiles::default(),
            });
            name
        };
        assert_eq!(add(&mut s), "Layer 1");
        assert_eq!(add(&mut s), "Layer 2");
        s.apply(&LayerOp::Delete {
            name: "Layer 1".into(),
        });
        assert_eq!(add(&mut s), "Layer 3", "Layer 2 remains: the next is 3");
    }
}

//! A layer step as journals write it.

use crate::layers::{Changes, LayerFiles, LayerOp, Mode};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A layer step as a journal holds it: `op` (add, select, set, move, delete, merge_down,
/// duplicate, fill_mask), the layer's `name` and the fields that op takes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayerEntry {
    pub op: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opacity: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visible: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locked: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rename: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// add: height files the layer's fields start from, relative to the journal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alpha: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mask: Option<String>,
    /// fill_mask: the height, slope and curvature bands.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rules: Option<crate::layers::MaskRules>,
}

impl LayerEntry {
    /// The entry that reads back as `op`.
    pub fn of(op: &LayerOp) -> Self {
        let mut e = LayerEntry {
            op: op.op_name().to_string(),
            name: op.name().to_string(),
            ..Default::default()
        };
        match op {
            LayerOp::Add {
                mode,
                opacity,
                files,
                ..
            } => {
                e.mode = Some(mode.name().to_string());
                e.opacity = Some(*opacity);
                e.value = files.value.clone();
                e.alpha = files.alpha.clone();
                e.mask = files.mask.clone();
            }
            LayerOp::Set { changes: c, .. } => {
                e.opacity = c.opacity;
                e.visible = c.visible;
                e.mode = c.mode.map(|m| m.name().to_string());
                e.locked = c.locked;
                e.rename = c.rename.clone();
            }
            LayerOp::Move { index, .. } => e.index = Some(*index),
            LayerOp::Duplicate { rename, .. } => e.rename = Some(rename.clone()),
            LayerOp::FillMask { rules, .. } => e.rules = Some(*rules),
            LayerOp::Select { .. } | LayerOp::Delete { .. } | LayerOp::MergeDown { .. } => {}
        }
        e
    }

    /// The step as an operation; `field: problem` for a field it lacks, has in excess or holds
    /// a bad value in. Files resolve against `base_dir` and must exist.
    pub(super) fn op(&self, base_dir: &Path) -> Result<LayerOp, String> {
        let allowed: &[&str] = match self.op.as_str() {
            "add" => &["mode", "opacity", "value", "alpha", "mask"],
            "set" => &["mode", "opacity", "visible", "locked", "rename"],
            "move" => &["index"],
            "duplicate" => &["rename"],
            "fill_mask" => &["rules"],
            "select" | "delete" | "merge_down" => &[],
            other => {
                return Err(format!(
                    "op: unknown layer op '{other}' (add, select, set, move, delete, merge_down, duplicate, fill_mask)"
                ))
            }
        };
        let given = [
            ("mode", self.mode.is_some()),
            ("opacity", self.opacity.is_some()),
            ("visible", self.visible.is_some()),
            ("locked", self.locked.is_some()),
            ("rename", self.rename.is_some()),
            ("index", self.index.is_some()),
            ("value", self.value.is_some()),
            ("alpha", self.alpha.is_some()),
            ("mask", self.mask.is_some()),
            ("rules", self.rules.is_some()),
        ];
        if let Some((field, _)) = given.iter().find(|(f, g)| *g && !allowed.contains(f)) {
            return Err(format!("{field}: a {} step takes no {field}", self.op));
        }
        let mode = match &self.mode {
            Some(m) => Some(
                Mode::from_name(m)
                    .ok_or_else(|| format!("mode: unknown mode '{m}' (add, max, min, replace)"))?,
            ),
            None => None,
        };
        let file = |what: &str, f: &Option<String>| -> Result<Option<String>, String> {
            let Some(f) = f else { return Ok(None) };
            let path = base_dir.join(f);
            if !path.is_file() {
                return Err(format!("{what}: {} is not a file", path.display()));
            }
            Ok(Some(path.to_string_lossy().into_owned()))
        };
        let name = self.name.clone();
        Ok(match self.op.as_str() {
            "add" => LayerOp::Add {
                name,
                mode: mode.unwrap_or(Mode::Add),
                opacity: self.opacity.unwrap_or(1.0),
                files: LayerFiles {
                    value: file("value", &self.value)?,
                    alpha: file("alpha", &self.alpha)?,
                    mask: file("mask", &self.mask)?,
                },
            },
            "select" => LayerOp::Select { name },
            "set" => LayerOp::Set {
                name,
                changes: Changes {
                    opacity: self.opacity,
                    visible: self.visible,
                    mode,
                    locked: self.locked,
                    rename: self.rename.clone(),
                },
            },
            "move" => LayerOp::Move {
                name,
                index: self
                    .index
                    .ok_or("index: a move step needs the index to move to")?,
            },
            "delete" => LayerOp::Delete { name },
            "merge_down" => LayerOp::MergeDown { name },
            "fill_mask" => LayerOp::FillMask {
                name,
                rules: self
                    .rules
                    .ok_or("rules: a fill_mask step needs rules (height, slope, curvature)")?,
            },
            _ => LayerOp::Duplicate {
                name,
                rename: self
                    .rename
                    .clone()
                    .ok_or("rename: a duplicate step needs the copy's name (rename)")?,
            },
        })
    }
}

//! Stroke journals: a versioned JSON record of a document and the strokes, undos and redos made
//! on it (format in docs/journal.md). [`Journal::parse`] checks every step before anything runs;
//! an error names the step and the field. [`Journal::replay`] runs the steps on a [`Replayer`]
//! (the GPU engine or its CPU twin).

use crate::brush::path::{PathMode, PathSpec, Profile};
use crate::brush::shared::BrushInstance;
use crate::brush::stroke::{stroke_instances, StrokeSample};
use crate::brush::{BrushSettings, BrushType, Falloff};
use crate::erosion::ErosionBrush;
use crate::layers::{Changes, LayerFiles, LayerOp, Mode, Stack};
use crate::noise::NoiseSettings;
use crate::pages::geometry::Region;
use crate::pages::geometry::{DocumentDesc, HeightFormat, DEFAULT_PAGE_SIZE};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The journal version this build reads and writes.
pub const JOURNAL_VERSION: u32 = 2;
/// The oldest journal version this scarp reads (version 1 has no layer steps).
pub const OLDEST_JOURNAL_VERSION: u32 = 1;
/// Most instances one stroke may produce (a guard against spacing/length bombs).
pub const MAX_STROKE_INSTANCES: usize = 10_000_000;
/// Most samples in one stroke.
pub const MAX_STROKE_SAMPLES: usize = 1_000_000;

/// Why a journal (or a brush preset) cannot be read, checked or written. Messages name the file,
/// the step and the field, as `scarp apply` prints them.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The journal file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A problem in step `step` (if it lies in one) at `field` (a JSON path such as `version`,
    /// `document.initial.flat` or `steps[2].stroke.brush.kind`; empty where the problem says it).
    #[error("{}", located(*step, field, problem))]
    Invalid {
        step: Option<usize>,
        field: String,
        problem: String,
    },
    /// The document's initial height file cannot be read.
    #[error("document.initial.file {0}")]
    InitialFile(#[source] crate::atomic_file::FileError),
    /// A problem in the journal file at `path`.
    #[error("{}: {inner}", path.display())]
    In {
        path: PathBuf,
        #[source]
        inner: Box<JournalError>,
    },
    #[error("this stamp brush's image was made in memory, not loaded from a file: it cannot be written to a journal or preset")]
    StampNotWritable,
}

impl JournalError {
    /// The step the problem lies in, if it lies in one.
    pub fn step(&self) -> Option<usize> {
        match self {
            Self::Invalid { step, .. } => *step,
            Self::In { inner, .. } => inner.step(),
            _ => None,
        }
    }

    fn at(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Self::Invalid {
            step: None,
            field: field.into(),
            problem: problem.into(),
        }
    }

    fn in_step(step: usize, problem: String) -> Self {
        Self::Invalid {
            step: Some(step),
            field: String::new(),
            problem,
        }
    }
}

/// `steps[i].field: problem`, leaving out what is not known.
fn located(step: Option<usize>, field: &str, problem: &str) -> String {
    match (step, field.is_empty()) {
        (Some(i), true) => format!("steps[{i}]: {problem}"),
        (Some(i), false) => format!("steps[{i}].{field}: {problem}"),
        (None, true) => problem.to_string(),
        (None, false) => format!("{field}: {problem}"),
    }
}

/// The journal file at `path` as written (a regular file; syntax errors name the file, the line
/// and the field).
fn read_file(path: &Path) -> Result<JournalFile, JournalError> {
    let text =
        crate::atomic_file::read_regular_to_string(path).map_err(|source| JournalError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    let de = &mut serde_json::Deserializer::from_str(&text);
    serde_path_to_error::deserialize(de).map_err(|e| within_file(path, path_error(e, &text)))
}

/// `e`, found in the journal file at `path`.
fn within_file(path: &Path, e: JournalError) -> JournalError {
    JournalError::In {
        path: path.to_path_buf(),
        inner: Box::new(e),
    }
}

/// A journal file as written: the one set of types both read and written (serde), so what the
/// editor saves is what `scarp apply` reads. [`Journal::parse`] turns it into checked steps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a journal object (version, document, steps)"
)]
pub struct JournalFile {
    pub version: u32,
    pub document: DocumentEntry,
    #[serde(default)]
    pub steps: Vec<StepEntry>,
}

/// The document of a journal file: its description and initial heights.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocumentEntry {
    pub width: u32,
    pub height: u32,
    #[serde(default = "default_format")]
    pub format: HeightFormat,
    #[serde(default = "default_page_size")]
    pub page_size: u32,
    #[serde(default)]
    pub height_min: f32,
    #[serde(default = "default_one")]
    pub height_max: f32,
    #[serde(default)]
    pub initial: Initial,
}

fn default_format() -> HeightFormat {
    HeightFormat::R32f
}
fn default_page_size() -> u32 {
    DEFAULT_PAGE_SIZE
}
fn default_one() -> f32 {
    1.0
}

/// A deserialization error of `text` as `field.path: problem` (the path left out at the top
/// level). Serde's `flatten` loses the path inside flattened parameters (a brush's noise and
/// erosion fields, an erode step's): the object's fields are then tried one by one to name the
/// one at fault.
fn path_error(e: serde_path_to_error::Error<serde_json::Error>, text: &str) -> JournalError {
    let path = e.path().clone();
    let inner = e.into_inner();
    let noise_field = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|root| {
            let brush = path.iter().try_fold(&root, |v, seg| match seg {
                serde_path_to_error::Segment::Seq { index } => v.get(*index),
                serde_path_to_error::Segment::Map { key } => v.get(key.as_str()),
                serde_path_to_error::Segment::Enum { variant } => v.get(variant.as_str()),
                serde_path_to_error::Segment::Unknown => None,
            })?;
            noise_field_error(brush)
        });
    let at = match path.to_string() {
        top if top == "." => String::new(),
        at => at,
    };
    match noise_field {
        Some((key, problem)) if at.is_empty() => JournalError::at(key, problem),
        Some((key, problem)) => JournalError::at(format!("{at}.{key}"), problem),
        None => JournalError::at(at, inner.to_string()),
    }
}

/// The first flattened parameter (noise or erosion) of a brush or erode object that fails to
/// read on its own, and why.
fn noise_field_error(brush: &serde_json::Value) -> Option<(String, String)> {
    brush.as_object()?.iter().find_map(|(key, value)| {
        let alone = serde_json::Value::Object([(key.clone(), value.clone())].into_iter().collect());
        let noise = serde_json::from_value::<NoiseSettings>(alone.clone()).err();
        noise
            .or_else(|| serde_json::from_value::<ErosionFields>(alone).err())
            .map(|e| (key.clone(), e.to_string()))
    })
}

/// Heights of a document before its first step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Initial {
    /// Every texel at this height.
    Flat(f32),
    /// A height file of width x height values (any format), relative to the journal's folder.
    File(PathBuf),
    /// A tile set stitched into the document (`terrain::tiles`: edge-sharing tiles): `pattern`
    /// holds `{i}` and `{j}` and is relative to the journal's folder; `grid` is [columns, rows].
    Tiles { pattern: PathBuf, grid: [u32; 2] },
}

impl Default for Initial {
    fn default() -> Self {
        Initial::Flat(0.0)
    }
}

/// One step of a journal file: a stroke, undo/redo counts, (version 2) a layer step, or an
/// erosion run over a region of the base.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum StepEntry {
    Stroke(Box<StrokeEntry>),
    Undo(u32),
    Redo(u32),
    Layer(Box<LayerEntry>),
    Erode(Box<ErodeEntry>),
    Path(Box<PathEntry>),
}

/// A path as a journal holds it (docs/journal.md, "Paths"): control points and what the band
/// does; absent fields take [`PathSpec::default`]'s values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathEntry {
    pub points: Vec<[f32; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub falloff: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_grade: Option<f32>,
}

impl PathEntry {
    /// The entry of `p`, every field written.
    pub fn of(p: &PathSpec) -> Self {
        Self {
            points: p.points.clone(),
            width: Some(p.width),
            falloff: Some(p.falloff),
            profile: Some(p.profile.name().into()),
            mode: Some(p.mode.name().into()),
            depth: Some(p.depth),
            max_grade: Some(p.max_grade),
        }
    }

    /// The path, checked against a `width` x `height` document; problems name the field.
    pub fn spec(&self, width: u32, height: u32) -> Result<PathSpec, String> {
        let d = PathSpec::default();
        let profile = match &self.profile {
            None => d.profile,
            Some(n) => Profile::from_name(n)
                .ok_or_else(|| format!("profile: unknown profile '{n}' (flat, u, v)"))?,
        };
        let mode = match &self.mode {
            None => d.mode,
            Some(n) => PathMode::from_name(n)
                .ok_or_else(|| format!("mode: unknown mode '{n}' (carve, raise, grade)"))?,
        };
        let spec = PathSpec {
            points: self.points.clone(),
            width: self.width.unwrap_or(d.width),
            falloff: self.falloff.unwrap_or(d.falloff),
            profile,
            mode,
            depth: self.depth.unwrap_or(d.depth),
            max_grade: self.max_grade.unwrap_or(d.max_grade),
        };
        spec.validate(width, height)?;
        Ok(spec)
    }
}

/// An erosion run as a journal holds it: `region` `[x, y, width, height]` (absent: the whole
/// document) and the run's model, steps and parameters, named as an erode brush names them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErodeEntry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<[u32; 4]>,
    #[serde(flatten)]
    pub erosion: ErosionFields,
}

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
    fn op(&self, base_dir: &Path) -> Result<LayerOp, String> {
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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StrokeEntry {
    pub brush: BrushEntry,
    pub samples: Vec<StrokeSample>,
}

/// A brush as a journal or preset file holds it: the brush fields and, flattened beside them,
/// every noise parameter of [`NoiseSettings`] (the names and defaults of `scarp noise`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BrushEntry {
    #[serde(rename = "type")]
    pub brush_type: String,
    pub radius: f32,
    #[serde(default)]
    pub inner_radius: f32,
    #[serde(default = "default_strength")]
    pub strength: f32,
    #[serde(default = "default_spacing")]
    pub spacing: f32,
    #[serde(default = "default_falloff")]
    pub falloff: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub falloff_power: Option<f32>,
    #[serde(flatten)]
    pub noise: NoiseSettings,
    /// Directional: compression axis relative to the stroke, degrees.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub angle: Option<f32>,
    /// Directional: compression ratio.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f32>,
    /// Stamp: image file (any height file format), relative to the journal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stamp: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stamp_size: Option<[u32; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stamp_scale: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stamp_follow: Option<bool>,
    /// Mask: the value painted toward (0..1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f32>,
    /// Mask: procedural rules filtering the brush (height, slope, curvature bands).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<crate::layers::MaskRules>,
    /// Terrace: the height between steps (default 0.05).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terrace_height: Option<f32>,
    /// Terrace: 0 (soft risers) to 1 (vertical risers), default 0.7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terrace_sharpness: Option<f32>,
    /// Flatten: the plane's rise along the stroke's first direction, height units per 1000
    /// texels (default 0: level).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flatten_tilt: Option<f32>,
    /// Erode: the model, steps and parameters.
    #[serde(flatten)]
    pub erosion: ErosionFields,
}

/// An erosion run's settings as a journal holds them, flattened into an erode brush and an
/// erode step: `model`, `steps` and the model's parameters named as `scarp erode`'s flags in
/// snake_case; absent fields take the defaults of docs/erosion.md.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ErosionFields {
    /// `hydraulic`, `thermal` or `both` (default both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Steps (per instance for a brush; default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<u32>,
    /// The model's parameters, named as `scarp erode`'s flags in snake_case (defaults
    /// of docs/erosion.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dt: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rain: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipe_area: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gravity: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dissolve: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deposit: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evaporation: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_tilt: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erosion_depth: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub talus_angle: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thermal_rate: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height_scale: Option<f32>,
}

impl ErosionFields {
    /// Every field of `e`, so a reader with other defaults reads the same run.
    pub fn of(e: &crate::erosion::ErosionBrush) -> Self {
        let p = &e.params;
        Self {
            model: Some(e.model.name().to_string()),
            steps: Some(e.steps),
            dt: Some(p.dt),
            rain: Some(p.rain),
            pipe_area: Some(p.pipe_area),
            gravity: Some(p.gravity),
            capacity: Some(p.capacity),
            dissolve: Some(p.dissolve),
            deposit: Some(p.deposit),
            evaporation: Some(p.evaporation),
            min_tilt: Some(p.min_tilt),
            erosion_depth: Some(p.erosion_depth),
            talus_angle: Some(p.talus_angle),
            thermal_rate: Some(p.thermal_rate),
            height_scale: e.height_scale,
        }
    }

    /// The name of the first field given, if any.
    fn given(&self) -> Option<&'static str> {
        let floats = [
            ("dt", self.dt),
            ("rain", self.rain),
            ("pipe_area", self.pipe_area),
            ("gravity", self.gravity),
            ("capacity", self.capacity),
            ("dissolve", self.dissolve),
            ("deposit", self.deposit),
            ("evaporation", self.evaporation),
            ("min_tilt", self.min_tilt),
            ("erosion_depth", self.erosion_depth),
            ("talus_angle", self.talus_angle),
            ("thermal_rate", self.thermal_rate),
            ("height_scale", self.height_scale),
        ];
        if self.model.is_some() {
            return Some("model");
        }
        if self.steps.is_some() {
            return Some("steps");
        }
        floats.iter().find(|(_, v)| v.is_some()).map(|(n, _)| *n)
    }

    /// The checked settings (defaults where absent); `field: problem` for a bad one.
    pub fn settings(&self) -> Result<crate::erosion::ErosionBrush, String> {
        use crate::erosion::{ErosionBrush, Model};
        let d = ErosionBrush::default();
        let p = &d.params;
        let model = match &self.model {
            Some(m) => Model::from_name(m)
                .ok_or_else(|| format!("model: unknown model '{m}' (hydraulic, thermal, both)"))?,
            None => d.model,
        };
        let e = ErosionBrush {
            model,
            steps: self.steps.unwrap_or(d.steps),
            params: crate::erosion::ErosionParams {
                dt: self.dt.unwrap_or(p.dt),
                rain: self.rain.unwrap_or(p.rain),
                pipe_area: self.pipe_area.unwrap_or(p.pipe_area),
                gravity: self.gravity.unwrap_or(p.gravity),
                capacity: self.capacity.unwrap_or(p.capacity),
                dissolve: self.dissolve.unwrap_or(p.dissolve),
                deposit: self.deposit.unwrap_or(p.deposit),
                evaporation: self.evaporation.unwrap_or(p.evaporation),
                min_tilt: self.min_tilt.unwrap_or(p.min_tilt),
                erosion_depth: self.erosion_depth.unwrap_or(p.erosion_depth),
                talus_angle: self.talus_angle.unwrap_or(p.talus_angle),
                thermal_rate: self.thermal_rate.unwrap_or(p.thermal_rate),
            },
            height_scale: self.height_scale,
        };
        e.validate()?;
        Ok(e)
    }
}

fn default_strength() -> f32 {
    0.5
}
fn default_spacing() -> f32 {
    0.25
}
fn default_falloff() -> String {
    "parabolic".into()
}

impl BrushEntry {
    /// The entry that reads back as `b`: every field written, so a reader with other defaults
    /// reads the same brush; a stamp brush's image by the absolute path it was loaded from
    /// (one made in memory has none: see [`Self::check_writable`]).
    pub fn of(b: &BrushSettings) -> Self {
        let stamp = b.stamp.as_deref().filter(|_| b.brush == BrushType::Stamp);
        Self {
            brush_type: b.brush.name().to_string(),
            radius: b.radius,
            inner_radius: b.inner_radius,
            strength: b.strength,
            spacing: b.spacing,
            falloff: b.falloff.name().to_string(),
            falloff_power: Some(b.falloff_power),
            noise: b.noise,
            angle: Some(b.dir_angle_deg),
            ratio: Some(b.dir_ratio),
            stamp: stamp.and_then(|s| s.source.clone()),
            stamp_size: stamp.map(|s| [s.width, s.height]),
            stamp_scale: stamp.map(|_| b.stamp_scale),
            stamp_follow: stamp.map(|_| b.stamp_follow),
            value: (b.brush == BrushType::Mask).then_some(b.value),
            terrace_height: (b.brush == BrushType::Terrace).then_some(b.terrace_height),
            terrace_sharpness: (b.brush == BrushType::Terrace).then_some(b.terrace_sharpness),
            flatten_tilt: (b.brush == BrushType::Flatten).then_some(b.flatten_tilt),
            rules: b.rules,
            // Written for erode brushes only.
            erosion: if b.brush == BrushType::Erode {
                ErosionFields::of(&b.erosion)
            } else {
                ErosionFields::default()
            },
        }
    }

    /// A stamp brush whose image was not loaded from a file cannot be written.
    pub fn check_writable(&self) -> Result<(), JournalError> {
        if self.brush_type == BrushType::Stamp.name() && self.stamp.is_none() {
            return Err(JournalError::StampNotWritable);
        }
        Ok(())
    }

    /// The checked brush; relative stamp paths resolve against `base_dir`.
    fn settings(&self, base_dir: &Path) -> Result<BrushSettings, String> {
        let brush = BrushType::from_name(&self.brush_type).ok_or_else(|| {
            format!(
                "brush.type: unknown brush '{}' (raise, lower, noise, level, smooth, contrast, directional, stamp, terrace, flatten, ramp, mask, erase, erode)",
                self.brush_type
            )
        })?;
        let falloff = Falloff::from_name(&self.falloff).ok_or_else(|| {
            format!(
                "brush.falloff: unknown falloff '{}' (parabolic, smooth, linear, power)",
                self.falloff
            )
        })?;
        let settings = BrushSettings {
            brush,
            radius: self.radius,
            inner_radius: self.inner_radius,
            strength: self.strength,
            spacing: self.spacing,
            falloff,
            falloff_power: self.falloff_power.unwrap_or(2.0),
            noise: self.noise.with_kind_defaults(),
            dir_angle_deg: self
                .angle
                .unwrap_or(if brush == BrushType::Stamp { 0.0 } else { 90.0 }),
            dir_ratio: self.ratio.unwrap_or(3.0),
            stamp: match &self.stamp {
                Some(p) => Some(std::sync::Arc::new(
                    crate::brush::stamp::Stamp::load(&base_dir.join(p), self.stamp_size)
                        .map_err(|e| format!("brush.stamp: {e}"))?,
                )),
                None => None,
            },
            stamp_scale: self.stamp_scale.unwrap_or(1.0),
            stamp_follow: self.stamp_follow.unwrap_or(true),
            value: self.value.unwrap_or(0.0),
            rules: self.rules,
            terrace_height: self.terrace_height.unwrap_or(0.05),
            terrace_sharpness: self.terrace_sharpness.unwrap_or(0.7),
            flatten_tilt: self.flatten_tilt.unwrap_or(0.0),
            erosion: {
                if brush != BrushType::Erode {
                    if let Some(name) = self.erosion.given() {
                        return Err(format!(
                            "brush.{name}: only erode brushes take it (this is a {} brush)",
                            brush.name()
                        ));
                    }
                }
                self.erosion.settings().map_err(|e| format!("brush.{e}"))?
            },
        };
        settings.validate().map_err(|e| format!("brush.{e}"))?;
        Ok(settings)
    }
}

impl JournalFile {
    /// The journal file of `document` with `initial` heights and the recorded `steps`.
    pub fn of(
        document: &DocumentDesc,
        initial: &Initial,
        steps: &[RecordedStep],
    ) -> Result<Self, JournalError> {
        let steps = steps
            .iter()
            .map(|step| {
                Ok(match step {
                    RecordedStep::Stroke { brush, samples } => {
                        let brush = BrushEntry::of(brush);
                        brush.check_writable()?;
                        StepEntry::Stroke(Box::new(StrokeEntry {
                            brush,
                            samples: samples.clone(),
                        }))
                    }
                    RecordedStep::Undo => StepEntry::Undo(1),
                    RecordedStep::Redo => StepEntry::Redo(1),
                    RecordedStep::Layer(op) => StepEntry::Layer(Box::new(LayerEntry::of(op))),
                    RecordedStep::Erode { region, erosion } => {
                        StepEntry::Erode(Box::new(ErodeEntry {
                            region: Some([region.x, region.y, region.width, region.height]),
                            erosion: ErosionFields::of(erosion),
                        }))
                    }
                    RecordedStep::Path(p) => StepEntry::Path(Box::new(PathEntry::of(p))),
                })
            })
            .collect::<Result<_, JournalError>>()?;
        Ok(Self {
            version: JOURNAL_VERSION,
            document: DocumentEntry {
                width: document.width,
                height: document.height,
                format: document.format,
                page_size: document.page_size,
                height_min: document.height_min,
                height_max: document.height_max,
                initial: initial.clone(),
            },
            steps,
        })
    }

    /// Pretty JSON, as journal files are written.
    pub fn to_json(&self) -> Result<String, JournalError> {
        serde_json::to_string_pretty(self).map_err(|e| JournalError::at("", e.to_string()))
    }

    /// Names the stamp files that lie in `dir` or below it relative to it (a journal saved in
    /// `dir` then moves with its stamps); others keep their absolute paths.
    pub fn stamps_relative_to(&mut self, dir: &Path) {
        let Ok(dir) = std::path::absolute(dir) else {
            return;
        };
        for step in &mut self.steps {
            if let StepEntry::Stroke(s) = step {
                if let Some(rel) = s
                    .brush
                    .stamp
                    .as_deref()
                    .and_then(|p| p.strip_prefix(&dir).ok())
                {
                    s.brush.stamp = Some(rel.to_path_buf());
                }
            }
        }
    }

    /// Strokes in the file.
    pub fn stroke_count(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| matches!(s, StepEntry::Stroke(_)))
            .count()
    }
}

/// One checked step.
#[derive(Clone, Debug)]
pub enum Step {
    Stroke {
        brush: BrushSettings,
        samples: Vec<StrokeSample>,
        instances: Vec<BrushInstance>,
    },
    Undo(u32),
    Redo(u32),
    Layer(LayerOp),
    /// An erosion run over `region` of the base (docs/erosion.md).
    Erode {
        region: Region,
        erosion: ErosionBrush,
    },
    /// A path over the base (src/brush/path.rs).
    Path(PathSpec),
}

/// A checked journal.
#[derive(Clone, Debug)]
pub struct Journal {
    pub document: DocumentDesc,
    pub initial: Initial,
    pub steps: Vec<Step>,
    /// The layer stack after the last step (empty for a journal without layer steps).
    pub layers: Stack,
}

/// Journal steps as the editor records them (undo/redo counts expanded).
pub fn recorded(steps: &[Step]) -> Vec<RecordedStep> {
    let mut out = Vec::new();
    for s in steps {
        match s {
            Step::Stroke { brush, samples, .. } => out.push(RecordedStep::Stroke {
                brush: brush.clone(),
                samples: samples.clone(),
            }),
            Step::Undo(n) => out.extend((0..*n).map(|_| RecordedStep::Undo)),
            Step::Redo(n) => out.extend((0..*n).map(|_| RecordedStep::Redo)),
            Step::Layer(op) => out.push(RecordedStep::Layer(op.clone())),
            Step::Erode { region, erosion } => out.push(RecordedStep::Erode {
                region: *region,
                erosion: *erosion,
            }),
            Step::Path(p) => out.push(RecordedStep::Path(p.clone())),
        }
    }
    out
}

/// What a journal replays on: the GPU engine or the CPU twin.
pub trait Replayer {
    type Error;
    fn stroke(
        &mut self,
        brush: &BrushSettings,
        instances: &[BrushInstance],
    ) -> Result<(), Self::Error>;
    fn undo(&mut self) -> Result<bool, Self::Error>;
    fn redo(&mut self) -> Result<bool, Self::Error>;
    /// A layer step (checked against the stack by [`Journal::check`]); `base_dir` is where the
    /// journal lies (files are already resolved).
    fn layer(&mut self, op: &LayerOp, base_dir: &Path) -> Result<(), Self::Error>;
    /// An erosion run over `region` of the base (checked by [`Journal::check`]), one undo step.
    fn erode(&mut self, region: Region, erosion: &ErosionBrush) -> Result<(), Self::Error>;
    /// A path over the base (checked by [`Journal::check`]), one undo step.
    fn path(&mut self, spec: &PathSpec) -> Result<(), Self::Error>;
}

impl Journal {
    /// Parses and checks `text`; relative initial files resolve against `base_dir`.
    pub fn parse(text: &str, base_dir: &Path) -> Result<Self, JournalError> {
        Self::parse_on(text, base_dir, &Stack::default())
    }

    fn parse_on(text: &str, base_dir: &Path, start: &Stack) -> Result<Self, JournalError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let raw: JournalFile =
            serde_path_to_error::deserialize(de).map_err(|e| path_error(e, text))?;
        Self::check_on(&raw, base_dir, start)
    }

    /// Checks a journal file; relative initial files resolve against `base_dir`.
    pub fn check(raw: &JournalFile, base_dir: &Path) -> Result<Self, JournalError> {
        Self::check_on(raw, base_dir, &Stack::default())
    }

    /// [`Self::check`] for steps that start on a document with the layers of `start` (a
    /// project's recovery journal, `scarp apply --onto`).
    pub fn check_on(
        raw: &JournalFile,
        base_dir: &Path,
        start: &Stack,
    ) -> Result<Self, JournalError> {
        if !(OLDEST_JOURNAL_VERSION..=JOURNAL_VERSION).contains(&raw.version) {
            return Err(JournalError::at(
                "version",
                format!(
                    "{} is not supported (this scarp reads versions {OLDEST_JOURNAL_VERSION} to {JOURNAL_VERSION})",
                    raw.version
                ),
            ));
        }
        let d = &raw.document;
        let document = DocumentDesc {
            width: d.width,
            height: d.height,
            format: d.format,
            page_size: d.page_size,
            height_min: d.height_min,
            height_max: d.height_max,
        };
        document
            .validate()
            .map_err(|e| JournalError::at("document", e))?;
        let initial = match &d.initial {
            Initial::Flat(h) if !h.is_finite() => {
                return Err(JournalError::at(
                    "document.initial.flat",
                    format!("must be finite, got {h}"),
                ))
            }
            Initial::Flat(h) => Initial::Flat(*h),
            Initial::File(p) => Initial::File(base_dir.join(p)),
            Initial::Tiles { pattern, grid } => {
                if !crate::terrain::tiles::is_pattern(pattern) {
                    return Err(JournalError::at(
                        "document.initial.tiles.pattern",
                        format!("{} holds no {{i}} and {{j}}", pattern.display()),
                    ));
                }
                Initial::Tiles {
                    pattern: base_dir.join(pattern),
                    grid: *grid,
                }
            }
        };
        let mut steps = Vec::with_capacity(raw.steps.len());
        let (mut undoable, mut redoable) = (0u64, 0u64);
        // The stack after each undoable step (undo and redo move along it), so layer steps and
        // strokes are checked against the layers they will meet.
        let mut stacks = vec![start.clone()];
        for (i, step) in raw.steps.iter().enumerate() {
            let at = |e: String| JournalError::in_step(i, e);
            let stack = stacks[undoable as usize].clone();
            steps.push(match step {
                StepEntry::Layer(l) => {
                    if raw.version < 2 {
                        return Err(at("layer: layer steps need journal version 2".into()));
                    }
                    let op = l.op(base_dir).map_err(|e| at(format!("layer.{e}")))?;
                    stack.check(&op).map_err(|e| at(format!("layer.{e}")))?;
                    let mut next = stack;
                    next.apply(&op);
                    undoable += 1;
                    redoable = 0;
                    stacks.truncate(undoable as usize);
                    stacks.push(next);
                    Step::Layer(op)
                }
                StepEntry::Stroke(s) => {
                    let brush = s.brush.settings(base_dir).map_err(|e| at(format!("stroke.{e}")))?;
                    match stack.selected_layer() {
                        None if BrushType::LAYER_ONLY.contains(&brush.brush) => {
                            return Err(at(format!("stroke.brush.type: {} brushes paint layers, and the base is selected", brush.brush.name())));
                        }
                        Some(l) if l.locked => {
                            return Err(at(format!("stroke: layer {:?} is locked", l.name)));
                        }
                        _ => {}
                    }
                    if s.samples.is_empty() || s.samples.len() > MAX_STROKE_SAMPLES {
                        return Err(at(format!("stroke.samples: needs 1 to {MAX_STROKE_SAMPLES} samples, got {}", s.samples.len())));
                    }
                    for (j, p) in s.samples.iter().enumerate() {
                        if !(p.x.is_finite() && p.y.is_finite() && p.t.is_finite()) {
                            return Err(at(format!("stroke.samples[{j}]: x, y and t must be finite")));
                        }
                        if !(0.0..=1.0).contains(&p.pressure) {
                            return Err(at(format!("stroke.samples[{j}].pressure: must be in [0, 1], got {}", p.pressure)));
                        }
                    }
                    let length: f64 = s
                        .samples
                        .windows(2)
                        .map(|w| f64::from(w[1].x - w[0].x).hypot(f64::from(w[1].y - w[0].y)))
                        .sum();
                    let estimate = length / f64::from(brush.spacing * brush.radius);
                    if estimate > MAX_STROKE_INSTANCES as f64 {
                        return Err(at(format!(
                            "stroke: about {estimate:.0} instances (path length / (spacing x radius)), more than {MAX_STROKE_INSTANCES}"
                        )));
                    }
                    let instances = stroke_instances(&brush, &s.samples);
                    undoable += 1;
                    redoable = 0;
                    stacks.truncate(undoable as usize);
                    stacks.push(stack);
                    Step::Stroke { brush, samples: s.samples.clone(), instances }
                }
                StepEntry::Erode(e) => {
                    if let Some(l) = stack.selected_layer() {
                        return Err(at(format!("erode: erosion reshapes the base, and layer {:?} is selected", l.name)));
                    }
                    let region = match e.region {
                        Some([x, y, width, height]) => Region { x, y, width, height },
                        None => Region { x: 0, y: 0, width: document.width, height: document.height },
                    };
                    crate::pages::geometry::check_region(document.width, document.height, region)
                        .map_err(|e| at(format!("erode.region: {e}")))?;
                    let erosion = e.erosion.settings().map_err(|e| at(format!("erode.{e}")))?;
                    undoable += 1;
                    redoable = 0;
                    stacks.truncate(undoable as usize);
                    stacks.push(stack);
                    Step::Erode { region, erosion }
                }
                StepEntry::Path(p) => {
                    if let Some(l) = stack.selected_layer() {
                        return Err(at(format!("path: a path reshapes the base, and layer {:?} is selected", l.name)));
                    }
                    let spec = p.spec(document.width, document.height).map_err(|e| at(format!("path.{e}")))?;
                    undoable += 1;
                    redoable = 0;
                    stacks.truncate(undoable as usize);
                    stacks.push(stack);
                    Step::Path(spec)
                }
                StepEntry::Undo(n) => {
                    if *n == 0 || u64::from(*n) > undoable {
                        return Err(at(format!("undo: {n} requested, {undoable} step(s) can be undone here")));
                    }
                    undoable -= u64::from(*n);
                    redoable += u64::from(*n);
                    Step::Undo(*n)
                }
                StepEntry::Redo(n) => {
                    if *n == 0 || u64::from(*n) > redoable {
                        return Err(at(format!("redo: {n} requested, {redoable} step(s) can be redone here")));
                    }
                    redoable -= u64::from(*n);
                    undoable += u64::from(*n);
                    Step::Redo(*n)
                }
            });
        }
        Ok(Self {
            document,
            initial,
            steps,
            layers: stacks.swap_remove(undoable as usize),
        })
    }

    /// Reads and checks the journal at `path`; errors start with the file name.
    pub fn load(path: &Path) -> Result<Self, JournalError> {
        Self::load_on(path, &Stack::default())
    }

    /// [`Self::check_on`], keeping the steps before the first one that does not check (a
    /// recovery replays what it can): the journal of those steps, and that step's error (None
    /// when every step checks). A problem outside the steps (version, document) is an error.
    pub fn check_prefix(
        raw: &JournalFile,
        base_dir: &Path,
        start: &Stack,
    ) -> Result<(Self, Option<JournalError>), JournalError> {
        match Self::check_on(raw, base_dir, start) {
            Ok(j) => Ok((j, None)),
            Err(e) => match e.step() {
                Some(k) => {
                    let mut head = raw.clone();
                    head.steps.truncate(k);
                    Ok((Self::check_on(&head, base_dir, start)?, Some(e)))
                }
                None => Err(e),
            },
        }
    }

    /// [`Self::load`] through [`Self::check_prefix`].
    pub fn load_prefix(path: &Path) -> Result<(Self, Option<JournalError>), JournalError> {
        let within = |e| within_file(path, e);
        let raw = read_file(path)?;
        let base = path.parent().unwrap_or(Path::new("."));
        let (journal, failed) =
            Self::check_prefix(&raw, base, &Stack::default()).map_err(within)?;
        Ok((journal, failed.map(within)))
    }

    /// [`Self::load`] for steps that start on a document with the layers of `start`.
    pub fn load_on(path: &Path, start: &Stack) -> Result<Self, JournalError> {
        let raw = read_file(path)?;
        let base = path.parent().unwrap_or(Path::new("."));
        Self::check_on(&raw, base, start).map_err(|e| within_file(path, e))
    }

    /// Loads the initial heights (`None` for a flat document): any height file format
    /// (`terrain::formats`), of the document's size; integer formats map onto the document's
    /// height range.
    pub fn initial_heights(&self) -> Result<Option<Vec<f32>>, JournalError> {
        let d = &self.document;
        let path = match &self.initial {
            Initial::Flat(_) => return Ok(None),
            Initial::File(path) => path,
            Initial::Tiles { pattern, grid } => {
                return self.initial_tiles(pattern, *grid).map(Some)
            }
        };
        let options = crate::terrain::formats::ReadOptions {
            size: Some((d.width, d.height)),
            range: (d.height_min, d.height_max),
            ..Default::default()
        };
        crate::terrain::formats::read(path, &options)
            .map(|h| Some(h.values))
            .map_err(JournalError::InitialFile)
    }

    /// The document's initial heights stitched from an edge-sharing tile set.
    fn initial_tiles(
        &self,
        pattern: &Path,
        [cols, rows]: [u32; 2],
    ) -> Result<Vec<f32>, JournalError> {
        use crate::terrain::tiles;
        let d = &self.document;
        let bad = |problem: String| JournalError::at("document.initial.tiles", problem);
        let tw = tiles::tile_side(d.width, cols, "width").map_err(bad)?;
        let th = tiles::tile_side(d.height, rows, "height").map_err(bad)?;
        let options = crate::terrain::formats::ReadOptions {
            size: Some((tw, th)),
            range: (d.height_min, d.height_max),
            ..Default::default()
        };
        let stitched = tiles::read_set(pattern, cols, rows, &options).map_err(bad)?;
        Ok(stitched.grid.values)
    }

    /// Runs every step on `target`, calling `after_stroke(step index)` after each stroke.
    pub fn replay<R: Replayer>(
        &self,
        target: &mut R,
        after_stroke: impl FnMut(usize, &R),
    ) -> Result<(), R::Error> {
        match self.replay_until_error(target, after_stroke) {
            (_, Some(e)) => Err(e),
            (_, None) => Ok(()),
        }
    }

    /// [`Self::replay`], stopping at the first step that fails: how many steps ran in full (the
    /// target holds them) and the failing step's error.
    pub fn replay_until_error<R: Replayer>(
        &self,
        target: &mut R,
        mut after_stroke: impl FnMut(usize, &R),
    ) -> (usize, Option<R::Error>) {
        for (i, step) in self.steps.iter().enumerate() {
            if let Err(e) = Self::replay_step(i, step, target, &mut after_stroke) {
                return (i, Some(e));
            }
        }
        (self.steps.len(), None)
    }

    fn replay_step<R: Replayer>(
        i: usize,
        step: &Step,
        target: &mut R,
        after_stroke: &mut impl FnMut(usize, &R),
    ) -> Result<(), R::Error> {
        {
            // A span per step in traces (and in SCARP_PROFILE's totals).
            let _step = crate::profile::scope(match step {
                Step::Stroke { .. } => "step: stroke",
                Step::Undo(_) => "step: undo",
                Step::Redo(_) => "step: redo",
                Step::Layer(_) => "step: layer",
                Step::Erode { .. } => "step: erode",
                Step::Path(_) => "step: path",
            });
            match step {
                Step::Stroke {
                    brush, instances, ..
                } => {
                    target.stroke(brush, instances)?;
                    after_stroke(i, target);
                }
                // Counts were checked by `parse`.
                Step::Undo(n) => {
                    for _ in 0..*n {
                        target.undo()?;
                    }
                }
                Step::Redo(n) => {
                    for _ in 0..*n {
                        target.redo()?;
                    }
                }
                Step::Layer(op) => target.layer(op, Path::new("."))?,
                Step::Erode { region, erosion } => target.erode(*region, erosion)?,
                Step::Path(spec) => target.path(spec)?,
            }
        }
        Ok(())
    }
}

impl Replayer for crate::brush::cpu::CpuTerrain {
    type Error = std::convert::Infallible;
    fn stroke(
        &mut self,
        brush: &BrushSettings,
        instances: &[BrushInstance],
    ) -> Result<(), Self::Error> {
        self.apply_stroke(brush, instances);
        Ok(())
    }
    fn undo(&mut self) -> Result<bool, Self::Error> {
        Ok(crate::brush::cpu::CpuTerrain::undo(self))
    }
    fn layer(&mut self, op: &LayerOp, _base_dir: &Path) -> Result<(), Self::Error> {
        // The twin of one height field; layered documents have theirs in tests/layers.rs.
        panic!("the CPU twin of a height field cannot replay layer step {op:?}")
    }
    fn redo(&mut self) -> Result<bool, Self::Error> {
        Ok(crate::brush::cpu::CpuTerrain::redo(self))
    }
    fn erode(&mut self, region: Region, erosion: &ErosionBrush) -> Result<(), Self::Error> {
        let d = *self.desc();
        let spec = crate::erosion::run::RunSpec::of(erosion, d.width, d.height);
        self.erode_region(region, &spec);
        Ok(())
    }
    fn path(&mut self, spec: &PathSpec) -> Result<(), Self::Error> {
        self.apply_path(spec);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::NoiseKind;

    fn parse(s: &str) -> Result<Journal, String> {
        Journal::parse(s, Path::new(".")).map_err(|e| e.to_string())
    }

    const OK: &str = r#"{"version": 1,
        "document": {"width": 1024, "height": 1024, "format": "r32f", "page_size": 512,
                     "height_min": 0.0, "height_max": 1.0, "initial": {"flat": 0.0}},
        "steps": [
          {"stroke": {"brush": {"type": "raise", "radius": 64, "inner_radius": 0, "strength": 0.5,
                                 "spacing": 0.25, "falloff": "parabolic"},
                      "samples": [{"x": 512, "y": 512, "pressure": 1.0, "t": 0.0}]}},
          {"undo": 1}, {"redo": 1}]}"#;

    /// Every struct of a journal refuses a misspelled field, naming it (a misspelled sample
    /// field painted at pressure 1.0 before).
    #[test]
    fn a_misspelled_field_is_refused_in_every_journal_struct() {
        let layer = r#"{"version": 2, "document": {"width": 64, "height": 64},
            "steps": [{"layer": {"op": "add", "name": "a", "modee": "add"}}]}"#;
        let erode = r#"{"version": 2, "document": {"width": 64, "height": 64},
            "steps": [{"erode": {"regoin": [0, 0, 8, 8]}}]}"#;
        let path = r#"{"version": 2, "document": {"width": 64, "height": 64},
            "steps": [{"path": {"points": [[1, 1], [9, 9]], "widht": 4}}]}"#;
        let cases = [
            (
                OK.replace(r#""pressure": 1.0"#, r#""presure": 1.0"#),
                "presure",
            ),
            (
                OK.replace(r#""version": 1"#, r#""version": 1, "verison": 1"#),
                "verison",
            ),
            (OK.replace(r#""width": 1024"#, r#""widht": 1024"#), "widht"),
            (OK.replace(r#""samples""#, r#""sampels""#), "sampels"),
            (
                OK.replace(r#""radius": 64"#, r#""radius": 64, "raduis": 3"#),
                "raduis",
            ),
            (OK.replace(r#"{"undo": 1}"#, r#"{"undoo": 1}"#), "undoo"),
            (layer.to_string(), "modee"),
            (erode.to_string(), "regoin"),
            (path.to_string(), "widht"),
        ];
        for (text, field) in cases {
            let e = parse(&text).unwrap_err();
            assert!(e.contains(field), "{field}: {e}");
        }
    }

    #[test]
    fn brush_errors_name_the_field_even_inside_the_noise_parameters() {
        let typo = OK.replace(r#""type": "raise""#, r#""type": "noise", "octavez": 3"#);
        let e = parse(&typo).unwrap_err();
        assert!(e.contains("octavez"), "{e}");
        let bad = OK.replace(r#""type": "raise""#, r#""type": "noise", "seed": "x""#);
        let e = parse(&bad).unwrap_err();
        assert!(e.starts_with("steps[0].stroke.brush.seed: "), "{e}");
    }

    #[test]
    fn every_brush_type_parses_by_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s.r32"), [0u8; 4]).unwrap();
        for ty in BrushType::ALL {
            let extra = if ty == BrushType::Stamp {
                r#", "stamp": "s.r32", "stamp_size": [1, 1]"#
            } else {
                ""
            };
            let text = OK.replace(
                r#""type": "raise""#,
                &format!(r#""type": "{}"{extra}"#, ty.name()),
            );
            let j =
                Journal::parse(&text, dir.path()).unwrap_or_else(|e| panic!("{}: {e}", ty.name()));
            let Step::Stroke { brush, .. } = &j.steps[0] else {
                panic!()
            };
            assert_eq!(brush.brush, ty);
        }
    }

    #[test]
    fn stamp_brushes_load_their_image_relative_to_the_journal() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s.r32"), [0u8; 16]).unwrap();
        let text = OK.replace(
            r#""type": "raise""#,
            r#""type": "stamp", "stamp": "s.r32", "stamp_size": [2, 2], "stamp_scale": 0.5"#,
        );
        let j = Journal::parse(&text, dir.path()).unwrap();
        let Step::Stroke { brush, .. } = &j.steps[0] else {
            panic!()
        };
        assert_eq!(
            brush.stamp.as_ref().map(|s| (s.width, s.height)),
            Some((2, 2))
        );
        let missing = OK.replace(
            r#""type": "raise""#,
            r#""type": "stamp", "stamp": "nope.png""#,
        );
        let e = Journal::parse(&missing, dir.path())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("steps[0]: stroke.brush.stamp") && e.contains("nope.png"),
            "{e}"
        );
        let none = OK.replace(r#""type": "raise""#, r#""type": "stamp""#);
        assert!(Journal::parse(&none, dir.path())
            .unwrap_err()
            .to_string()
            .contains("needs a stamp image"));
    }

    #[test]
    fn stamps_beside_a_saved_journal_are_named_relative_to_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("stamps")).unwrap();
        let file = dir.path().join("stamps/s.r32");
        std::fs::write(&file, 1.0f32.to_le_bytes()).unwrap();
        let mut b = BrushSettings::new(BrushType::Stamp);
        b.stamp = Some(std::sync::Arc::new(
            crate::brush::stamp::Stamp::load(&file, None).unwrap(),
        ));
        let sample = StrokeSample {
            x: 4.0,
            y: 4.0,
            pressure: 1.0,
            t: 0.0,
        };
        let steps = [RecordedStep::Stroke {
            brush: b.clone(),
            samples: vec![sample],
        }];
        let desc = DocumentDesc::for_heights(16, 16);
        let mut j = JournalFile::of(&desc, &Initial::Flat(0.0), &steps).unwrap();
        // Elsewhere: absolute, as written.
        let mut elsewhere = j.clone();
        elsewhere.stamps_relative_to(Path::new("/nowhere"));
        assert_eq!(elsewhere, j);
        j.stamps_relative_to(dir.path());
        let StepEntry::Stroke(s) = &j.steps[0] else {
            panic!()
        };
        assert_eq!(s.brush.stamp.as_deref(), Some(Path::new("stamps/s.r32")));
        // Read from its folder, the same brush.
        let back = Journal::parse(&j.to_json().unwrap(), dir.path()).unwrap();
        let Step::Stroke { brush, .. } = &back.steps[0] else {
            panic!()
        };
        assert_eq!(brush.stamp.as_deref().map(|s| &s.values), Some(&vec![1.0]));
    }

    #[test]
    fn a_stamp_brush_loaded_from_a_file_is_written_with_its_path_and_reads_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let mut bytes = Vec::new();
        for v in [0.0f32, 0.25, 0.5, 1.0, 0.75, 0.125] {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        std::fs::write(dir.path().join("s.r32"), bytes).unwrap();
        let mut b = BrushSettings::new(BrushType::Stamp);
        b.stamp = Some(std::sync::Arc::new(
            crate::brush::stamp::Stamp::load(&dir.path().join("s.r32"), Some([3, 2])).unwrap(),
        ));
        b.stamp_scale = 0.7;
        b.stamp_follow = false;
        b.dir_angle_deg = 35.0;
        let json = brush_json(&b).unwrap();
        assert!(Path::new(json["stamp"].as_str().unwrap()).is_absolute());
        // Read from anywhere: the path is absolute.
        let back = parse_brush(&json.to_string(), Path::new("/")).unwrap();
        assert_eq!(back, b);
        // A stamp made in memory has no file to name.
        b.stamp = Some(std::sync::Arc::new(crate::brush::stamp::Stamp {
            width: 1,
            height: 1,
            values: vec![1.0],
            source: None,
        }));
        assert!(matches!(
            brush_json(&b),
            Err(JournalError::StampNotWritable)
        ));
    }

    #[test]
    fn the_documented_example_parses() {
        let j = parse(OK).unwrap();
        assert_eq!(j.document.width, 1024);
        assert_eq!(j.steps.len(), 3);
        let Step::Stroke { instances, .. } = &j.steps[0] else {
            panic!("first step is a stroke")
        };
        assert_eq!(instances.len(), 1);
    }

    #[test]
    fn errors_name_the_step_and_field() {
        let cases = [
            (
                OK.replace(r#""radius": 64"#, r#""radius": -1"#),
                "steps[0]: stroke.brush.radius",
            ),
            (
                OK.replace(r#""type": "raise""#, r#""type": "melt""#),
                "brush.type",
            ),
            (OK.replace(r#""version": 1"#, r#""version": 9"#), "version"),
            (
                OK.replace(r#"{"undo": 1}, {"redo": 1}"#, r#"{"undo": 2}"#),
                "steps[1]: undo",
            ),
            (
                OK.replace(r#"{"undo": 1}, {"redo": 1}"#, r#"{"redo": 1}"#),
                "steps[1]: redo",
            ),
            (
                OK.replace(r#""pressure": 1.0"#, r#""pressure": 3.0"#),
                "samples[0].pressure",
            ),
            (
                OK.replace(r#""page_size": 512"#, r#""page_size": 7"#),
                "document: page_size",
            ),
            (
                OK.replace(r#""spacing": 0.25"#, r#""spacing": 0.25, "colour": 1"#),
                "colour",
            ),
            (
                OK.replace(r#""spacing": 0.25"#, r#""spacing": 0.25, "steps": 5"#),
                "brush.steps: only erode",
            ),
            (OK.replace(r#""x": 512"#, r#""x": "left""#), "samples[0].x"),
            ("{".to_string(), "EOF"),
        ];
        for (text, expect) in cases {
            let e = parse(&text).unwrap_err();
            assert!(e.contains(expect), "expected '{expect}' in: {e}");
        }
    }

    #[test]
    fn noise_brushes_take_scarp_noise_names_and_defaults() {
        let text = OK.replace(
            r#""type": "raise""#,
            r#""type": "noise", "kind": "jordan", "seed": 3, "offset": [1.5, -2], "octaves": 6"#,
        );
        let j = parse(&text).unwrap();
        let Step::Stroke { brush, .. } = &j.steps[0] else {
            panic!()
        };
        assert_eq!(brush.noise.kind, NoiseKind::Jordan);
        assert_eq!(
            (brush.noise.seed, brush.noise.octaves, brush.noise.offset),
            (3, 6, [1.5, -2.0])
        );
        assert_eq!(brush.noise.warp, NoiseSettings::new(NoiseKind::Jordan).warp);
        let bad = OK.replace(r#""type": "raise""#, r#""type": "noise", "octaves": 40"#);
        assert!(parse(&bad).unwrap_err().contains("octaves"));
    }
}

/// A step as the editor records it, for [`journal_json`].
#[derive(Clone, Debug)]
pub enum RecordedStep {
    Stroke {
        brush: BrushSettings,
        samples: Vec<StrokeSample>,
    },
    Undo,
    Redo,
    Layer(LayerOp),
    Erode {
        region: Region,
        erosion: ErosionBrush,
    },
    Path(PathSpec),
}

/// A brush as a preset file (or a project's preset list) holds it; see [`BrushEntry::of`].
pub fn brush_json(b: &BrushSettings) -> Result<serde_json::Value, JournalError> {
    let entry = BrushEntry::of(b);
    entry.check_writable()?;
    serde_json::to_value(entry).map_err(|e| JournalError::at("", e.to_string()))
}

/// Reads a brush written by [`brush_json`] (a preset file); errors name the field.
pub fn parse_brush(text: &str, base_dir: &Path) -> Result<BrushSettings, JournalError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    let raw: BrushEntry = serde_path_to_error::deserialize(de).map_err(|e| path_error(e, text))?;
    raw.settings(base_dir)
        .map_err(|e| JournalError::at("", e.trim_start_matches("brush.")))
}

/// A version-1 journal of `document` with `initial` heights and `steps` (pretty JSON).
pub fn journal_json(
    document: &DocumentDesc,
    initial: &Initial,
    steps: &[RecordedStep],
) -> Result<String, JournalError> {
    JournalFile::of(document, initial, steps)?.to_json()
}

#[cfg(test)]
mod writer_tests {
    use super::*;
    use crate::noise::NoiseKind;

    #[test]
    fn written_journals_read_back_to_the_same_brushes_and_instances() {
        let mut noise = BrushSettings::new(BrushType::Noise);
        noise.noise = NoiseSettings::new(NoiseKind::Jordan);
        noise.noise.seed = 7;
        noise.radius = 33.0;
        noise.falloff = Falloff::Power;
        noise.falloff_power = 3.5;
        let mut dir = BrushSettings::new(BrushType::Directional);
        dir.dir_angle_deg = 30.0;
        dir.dir_ratio = 5.0;
        let samples = |k: f32| {
            (0..6)
                .map(|i| StrokeSample {
                    x: 10.0 + 9.0 * i as f32,
                    y: 20.0 + k * (i as f32).sin() * 5.0,
                    pressure: 0.5 + 0.1 * i as f32,
                    t: i as f32 * 0.01,
                })
                .collect::<Vec<_>>()
        };
        let steps = vec![
            RecordedStep::Stroke {
                brush: noise.clone(),
                samples: samples(1.0),
            },
            RecordedStep::Stroke {
                brush: dir.clone(),
                samples: samples(2.0),
            },
            RecordedStep::Undo,
            RecordedStep::Redo,
        ];
        let doc = DocumentDesc {
            width: 100,
            height: 80,
            format: HeightFormat::R16,
            page_size: 128,
            height_min: -1.0,
            height_max: 2.0,
        };
        let text = journal_json(&doc, &Initial::Flat(0.25), &steps).unwrap();
        let j = Journal::parse(&text, Path::new(".")).unwrap();
        assert_eq!(j.document, doc);
        assert_eq!(j.initial, Initial::Flat(0.25));
        assert_eq!(j.steps.len(), 4);
        for (step, (brush, k)) in j.steps.iter().zip([(&noise, 1.0), (&dir, 2.0)]) {
            let Step::Stroke {
                brush: b,
                samples: s,
                instances,
            } = step
            else {
                panic!("not a stroke")
            };
            assert_eq!(b, brush);
            assert_eq!(s, &samples(k));
            assert_eq!(instances, &stroke_instances(brush, &samples(k)));
        }
        let preset = serde_json::to_string(&brush_json(&noise).unwrap()).unwrap();
        assert_eq!(parse_brush(&preset, Path::new(".")).unwrap(), noise);
        let bad = preset.replace("\"radius\":33.0", "\"radius\":-3.0");
        assert!(parse_brush(&bad, Path::new("."))
            .unwrap_err()
            .to_string()
            .starts_with("radius"));
    }

    /// Every shipped journal (stamps aside: their image path is not written yet) goes through the
    /// typed file format and back: the written file reads back equal, and its checked steps are
    /// the original's brushes and instances.
    #[test]
    fn journal_files_round_trip() {
        fn journals(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    journals(&p, out);
                } else if p.extension().is_some_and(|x| x == "json") {
                    out.push(p);
                }
            }
        }
        let mut paths = Vec::new();
        journals(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/journals"),
            &mut paths,
        );
        let mut checked = 0;
        for path in &paths {
            let j = Journal::load(path).unwrap();
            let file = match JournalFile::of(&j.document, &j.initial, &recorded(&j.steps)) {
                Ok(f) => f,
                Err(e) => {
                    assert!(e.to_string().contains("stamp"), "{}: {e}", path.display());
                    continue;
                }
            };
            let back: JournalFile = serde_json::from_str(&file.to_json().unwrap()).unwrap();
            assert_eq!(back, file, "{}", path.display());
            let again = Journal::check(&back, Path::new(".")).unwrap();
            assert_eq!(again.document, j.document);
            let strokes = |j: &Journal| -> Vec<(BrushSettings, Vec<BrushInstance>)> {
                j.steps
                    .iter()
                    .filter_map(|s| match s {
                        Step::Stroke {
                            brush, instances, ..
                        } => Some((brush.clone(), instances.clone())),
                        _ => None,
                    })
                    .collect()
            };
            assert_eq!(strokes(&again), strokes(&j), "{}", path.display());
            checked += 1;
        }
        assert!(checked >= 4, "only {checked} journals checked");
    }
}

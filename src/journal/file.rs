//! A journal file as written: the serde types read and written alike, so what the editor saves is
//! what `scarp apply` reads. Fields a step kind's domain type cannot carry as written (a brush's
//! stamp file, a layer's height files, names checked with the step's index) have an entry type
//! here; an erosion run is [`ErosionBrush`] itself.

use super::brush_entry::BrushEntry;
use super::layer_entry::LayerEntry;
use super::{JournalError, Step, JOURNAL_VERSION};
use crate::brush::path::{PathMode, PathSpec, Profile};
use crate::brush::stroke::StrokeSample;
use crate::erosion::{ErosionParams, RunFields};
use crate::geology::GeologyParams;
use crate::noise::NoiseSettings;
use crate::pages::geometry::{DocumentDesc, HeightFormat, Units, DEFAULT_PAGE_SIZE};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The journal file at `path` as written (a regular file; syntax errors name the file, the line
/// and the field).
pub(super) fn read_file(path: &Path) -> Result<JournalFile, JournalError> {
    let text =
        crate::atomic_file::read_regular_to_string(path).map_err(|source| JournalError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    let de = &mut serde_json::Deserializer::from_str(&text);
    serde_path_to_error::deserialize(de).map_err(|e| within_file(path, path_error(e, &text)))
}

/// `e`, found in the journal file at `path`.
pub(super) fn within_file(path: &Path, e: JournalError) -> JournalError {
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
    /// How the document is seen when the editor opens the journal (docs/journal.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view: Option<crate::render::saved_view::SavedView>,
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
    /// Its physical scale, where known (docs/journal.md).
    #[serde(default, skip_serializing_if = "Units::is_unknown")]
    pub units: Units,
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
pub(super) fn path_error(
    e: serde_path_to_error::Error<serde_json::Error>,
    text: &str,
) -> JournalError {
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
/// read on its own, and why (a key that none of them names is left to the caller).
fn noise_field_error(brush: &serde_json::Value) -> Option<(String, String)> {
    fn fails<T: serde::de::DeserializeOwned>(alone: &serde_json::Value) -> Option<String> {
        let e = serde_json::from_value::<T>(alone.clone())
            .err()?
            .to_string();
        (!e.starts_with("unknown field")).then_some(e)
    }
    brush.as_object()?.iter().find_map(|(key, value)| {
        let alone = serde_json::Value::Object([(key.clone(), value.clone())].into_iter().collect());
        fails::<NoiseSettings>(&alone)
            .or_else(|| fails::<RunFields>(&alone))
            .or_else(|| fails::<ErosionParams>(&alone))
            .or_else(|| fails::<GeologyParams>(&alone))
            .map(|e| (key.clone(), e))
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
    Geology(Box<GeologyEntry>),
}

impl StepEntry {
    /// The written form of `step` (a stamp brush made in memory has none).
    pub fn of(step: &Step) -> Result<Self, JournalError> {
        Ok(match step {
            Step::Stroke { brush, samples } => {
                let brush = BrushEntry::of(brush);
                brush.check_writable()?;
                StepEntry::Stroke(Box::new(StrokeEntry {
                    brush,
                    samples: samples.clone(),
                }))
            }
            Step::Undo(n) => StepEntry::Undo(*n),
            Step::Redo(n) => StepEntry::Redo(*n),
            Step::Layer(op) => StepEntry::Layer(Box::new(LayerEntry::of(op))),
            Step::Erode { region, erosion } => StepEntry::Erode(Box::new(ErodeEntry {
                region: Some([region.x, region.y, region.width, region.height]),
                run: erosion.run_fields(),
                params: erosion.params,
            })),
            Step::Path(p) => StepEntry::Path(Box::new(PathEntry::of(p))),
            Step::Geology { region, run } => StepEntry::Geology(Box::new(GeologyEntry {
                region: Some([region.x, region.y, region.width, region.height]),
                iterations: run.iterations,
                until_steady: run.until_steady,
                solve_steady: run.solve_steady,
                coarse: run.coarse,
                stop_after: run.stop_after,
                params: run.params,
            })),
        })
    }
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
    /// Carve: water standing in the channel (height units over the bed's centre); absent: dry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub water: Option<f32>,
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
            water: (p.water > 0.0).then_some(p.water),
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
            water: self.water.unwrap_or(d.water),
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
    pub run: RunFields,
    #[serde(flatten)]
    pub params: ErosionParams,
}

/// A geology run as a journal holds it (docs/journal.md, "Geology"): `region` `[x, y, width,
/// height]` (absent: the whole document), the iterations per level, the steady-state measure
/// to stop at, the coarse levels, and the model's parameters (absent: the defaults), named as
/// `scarp geology`'s flags in snake_case.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeologyEntry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<[u32; 4]>,
    #[serde(default = "default_iterations")]
    pub iterations: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_steady: Option<f32>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub solve_steady: bool,
    #[serde(default)]
    pub coarse: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_after: Option<u32>,
    #[serde(flatten)]
    pub params: GeologyParams,
}

fn default_iterations() -> u32 {
    crate::geology::params::GeologyRun::default().iterations
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StrokeEntry {
    pub brush: BrushEntry,
    pub samples: Vec<StrokeSample>,
}

impl JournalFile {
    /// The journal file of `document` with `initial` heights and `steps`.
    pub fn of(
        document: &DocumentDesc,
        initial: &Initial,
        steps: &[Step],
    ) -> Result<Self, JournalError> {
        let steps = steps
            .iter()
            .map(StepEntry::of)
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
                units: document.units,
                initial: initial.clone(),
            },
            steps,
            view: None,
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

/// A version-1 journal of `document` with `initial` heights and `steps` (pretty JSON).
pub fn journal_json(
    document: &DocumentDesc,
    initial: &Initial,
    steps: &[Step],
) -> Result<String, JournalError> {
    JournalFile::of(document, initial, steps)?.to_json()
}

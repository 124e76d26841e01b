//! A brush as journals and preset files write it.

use super::{path_error, JournalError};
use crate::brush::{BrushSettings, BrushType, Falloff};
use crate::erosion::{ErosionBrush, ErosionParams, RunFields};
use crate::noise::NoiseSettings;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

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
    /// A `warp` the file leaves out takes the kind's default as it is read.
    #[serde(flatten, deserialize_with = "resolved_noise")]
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
    /// Erode: the model, steps and parameters (absent: the defaults of docs/erosion.md; not
    /// written when they are the defaults).
    #[serde(flatten, skip_serializing_if = "RunFields::is_default")]
    pub erosion_run: RunFields,
    #[serde(flatten, skip_serializing_if = "ErosionParams::is_default")]
    pub erosion: ErosionParams,
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
            erosion_run: match b.brush {
                BrushType::Erode => b.erosion.run_fields(),
                _ => RunFields::default(),
            },
            erosion: match b.brush {
                BrushType::Erode => b.erosion.params,
                _ => ErosionParams::default(),
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

    /// The erosion settings of a `brush` brush: only erode brushes take other than the defaults.
    fn erosion(&self, brush: BrushType) -> Result<ErosionBrush, String> {
        if brush != BrushType::Erode {
            let changed = first_changed(&self.erosion_run).or_else(|| first_changed(&self.erosion));
            if let Some(name) = changed {
                return Err(format!(
                    "brush.{name}: only erode brushes take it (this is a {} brush)",
                    brush.name()
                ));
            }
        }
        let e = ErosionBrush::of_fields(self.erosion_run, self.erosion);
        e.validate().map_err(|e| format!("brush.{e}"))?;
        Ok(e)
    }

    /// The checked brush; relative stamp paths resolve against `base_dir`.
    pub(super) fn settings(&self, base_dir: &Path) -> Result<BrushSettings, String> {
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
            erosion: self.erosion(brush)?,
        };
        settings.validate().map_err(|e| format!("brush.{e}"))?;
        Ok(settings)
    }
}

/// A brush as a preset file, a project's preset list and the remembered settings hold it (see
/// [`BrushEntry::of`]): refused for a stamp made in memory, which has no file to name.
pub fn preset(b: &BrushSettings) -> Result<BrushEntry, JournalError> {
    let entry = BrushEntry::of(b);
    entry.check_writable()?;
    Ok(entry)
}

impl BrushEntry {
    /// The checked brush of a preset; relative stamp paths resolve against `base_dir`; errors
    /// name the field.
    pub fn brush(&self, base_dir: &Path) -> Result<BrushSettings, JournalError> {
        self.settings(base_dir)
            .map_err(|e| JournalError::at("", e.trim_start_matches("brush.")))
    }
}

/// Reads a preset file's text; errors name the field.
pub fn parse_brush(text: &str, base_dir: &Path) -> Result<BrushSettings, JournalError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    let raw: BrushEntry = serde_path_to_error::deserialize(de).map_err(|e| path_error(e, text))?;
    raw.brush(base_dir)
}

/// The first field of `v`, as written, that differs from its default.
fn first_changed<T: Serialize + Default>(v: &T) -> Option<String> {
    let given = serde_json::to_value(v).ok()?;
    let default = serde_json::to_value(T::default()).ok()?;
    given
        .as_object()?
        .iter()
        .find(|(k, v)| default.get(k.as_str()) != Some(v))
        .map(|(k, _)| k.clone())
}

/// The noise parameters as read, a missing `warp` given its kind's default (so an entry read
/// holds no NaN and writes back as it reads).
fn resolved_noise<'de, D: serde::Deserializer<'de>>(d: D) -> Result<NoiseSettings, D::Error> {
    NoiseSettings::deserialize(d).map(NoiseSettings::with_kind_defaults)
}

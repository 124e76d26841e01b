//! The artist's look of the terrain (with `VIEW_LOOK`): materials chosen per pixel by rule, an
//! analytic sky matching the sun with haze that takes its colour, exposure and a filmic tone map
//! to sRGB. The shading is `shaders-glsl/render/terrain.frag` and `sky.frag`; this module holds
//! the settings the panels edit, their presets and their files.
//!
//! **Materials by rule** (per pixel, soft edges `softness` degrees wide, thresholds moved by
//! value noise of `breakup` strength so edges are not contour lines):
//! * slope below `grass_slope`: grass, or sand below the `sand_line` (altitude, 0..1 of the
//!   document's range);
//! * slope from `grass_slope` to `rock_slope`: scree; above `rock_slope`: rock; concave steep
//!   ground (curvature above `scree_curvature`, world units per texel²) collects scree;
//! * above the `snow_line`, snow where the slope is below `snow_slope`.
//!
//! Procedural detail normals (two octaves of value-noise gradients, stronger on rock and scree)
//! keep close-ups from looking smooth.

use serde::{Deserialize, Serialize};

/// Material rules and colours (linear RGB).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Materials {
    pub grass_slope: f32,
    pub rock_slope: f32,
    pub snow_line: f32,
    pub sand_line: f32,
    pub snow_slope: f32,
    pub softness: f32,
    pub breakup: f32,
    pub scree_curvature: f32,
    pub rock: [f32; 3],
    pub grass: [f32; 3],
    pub scree: [f32; 3],
    pub sand: [f32; 3],
    pub snow: [f32; 3],
}

impl Default for Materials {
    /// Alpine: green valleys, grey rock, scree below the cliffs, snow on the high ground.
    fn default() -> Self {
        PRESETS[0].1
    }
}

/// Named material presets.
pub const PRESETS: [(&str, Materials); 3] = [
    (
        "alpine",
        Materials {
            grass_slope: 28.0,
            rock_slope: 42.0,
            snow_line: 0.72,
            sand_line: 0.03,
            snow_slope: 38.0,
            softness: 6.0,
            breakup: 0.5,
            scree_curvature: 0.05,
            rock: [0.14, 0.13, 0.12],
            grass: [0.06, 0.11, 0.03],
            scree: [0.25, 0.22, 0.19],
            sand: [0.36, 0.31, 0.21],
            snow: [0.85, 0.87, 0.90],
        },
    ),
    (
        "desert",
        Materials {
            grass_slope: 12.0,
            rock_slope: 35.0,
            snow_line: 1.1,
            sand_line: 0.35,
            snow_slope: 30.0,
            softness: 8.0,
            breakup: 0.6,
            scree_curvature: 0.05,
            rock: [0.36, 0.20, 0.12],
            grass: [0.30, 0.27, 0.14],
            scree: [0.48, 0.32, 0.20],
            sand: [0.62, 0.46, 0.28],
            snow: [0.85, 0.87, 0.90],
        },
    ),
    (
        "temperate",
        Materials {
            grass_slope: 35.0,
            rock_slope: 50.0,
            snow_line: 0.92,
            sand_line: 0.02,
            snow_slope: 35.0,
            softness: 8.0,
            breakup: 0.4,
            scree_curvature: 0.08,
            rock: [0.24, 0.22, 0.20],
            grass: [0.07, 0.17, 0.04],
            scree: [0.28, 0.26, 0.22],
            sand: [0.42, 0.38, 0.27],
            snow: [0.85, 0.87, 0.90],
        },
    ),
];

impl Materials {
    /// A preset by name, or a JSON file of [`Materials`] (fields left out keep the defaults).
    pub fn load(spec: &str) -> Result<Self, String> {
        if let Some((_, m)) = PRESETS.iter().find(|(n, _)| *n == spec) {
            return Ok(*m);
        }
        if !spec.ends_with(".json") {
            let names: Vec<&str> = PRESETS.iter().map(|(n, _)| *n).collect();
            return Err(format!(
                "{spec:?} is neither a preset ({}) nor a .json file",
                names.join(", ")
            ));
        }
        let text = crate::atomic_file::read_regular_to_string(std::path::Path::new(spec))
            .map_err(|e| format!("{spec}: {e}"))?;
        let m: Materials = serde_json::from_str(&text).map_err(|e| format!("{spec}: {e}"))?;
        m.check().map_err(|e| format!("{spec}: {e}"))?;
        Ok(m)
    }

    /// Writes the rules as JSON (what [`Self::load`] reads).
    pub fn save(&self, path: &std::path::Path) -> Result<(), String> {
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        crate::atomic_file::write_bytes_atomic(path, text.as_bytes()).map_err(|e| e.to_string())
    }

    /// Every value in range: slopes 0..90 degrees, softness and breakup non-negative, colours
    /// 0..1.
    pub fn check(&self) -> Result<(), String> {
        for (name, v) in [
            ("grass_slope", self.grass_slope),
            ("rock_slope", self.rock_slope),
            ("snow_slope", self.snow_slope),
        ] {
            if !(0.0..=90.0).contains(&v) {
                return Err(format!("{name} must be between 0 and 90 degrees, got {v}"));
            }
        }
        for (name, v) in [
            ("softness", self.softness),
            ("breakup", self.breakup),
            ("scree_curvature", self.scree_curvature),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("{name} must be 0 or more, got {v}"));
            }
        }
        for (name, v) in [("snow_line", self.snow_line), ("sand_line", self.sand_line)] {
            if !v.is_finite() {
                return Err(format!("{name} must be a number, got {v}"));
            }
        }
        for (name, c) in [
            ("rock", self.rock),
            ("grass", self.grass),
            ("scree", self.scree),
            ("sand", self.sand),
            ("snow", self.snow),
        ] {
            if c.iter().any(|v| !(0.0..=1.0).contains(v)) {
                return Err(format!("{name} colour must be 0..1 per channel, got {c:?}"));
            }
        }
        Ok(())
    }
}

/// The whole look: materials, exposure, the sun's strength and the detail normals.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Look {
    pub materials: Materials,
    /// Multiplies the scene's light before the tone map (1: as lit).
    pub exposure: f32,
    /// Sun irradiance relative to the sky's.
    pub sun_intensity: f32,
    /// Strength of the procedural detail normals (0: off).
    pub detail: f32,
}

impl Default for Look {
    fn default() -> Self {
        Self {
            materials: Materials::default(),
            exposure: 1.0,
            sun_intensity: 2.0,
            detail: 1.0,
        }
    }
}

/// The lowest snow line where heights are known in metres: outside the polar regions the
/// permanent snow line lies above about 2,500 m, so hills of 1,000 m get none, whatever share of
/// their height range the preset's line is.
pub const MIN_SNOW_LINE_M: f64 = 2500.0;

impl Materials {
    /// These materials on a document of `desc` whose altitude rules span `lo..hi` (height
    /// units): where heights are in metres, the snow line no lower than [`MIN_SNOW_LINE_M`].
    pub fn on_document(mut self, desc: &crate::pages::DocumentDesc, (lo, hi): (f32, f32)) -> Self {
        if desc.units.height_unit.is_some() && hi > lo {
            let (m_lo, m_hi) = (desc.metres(lo), desc.metres(hi));
            let floor = ((MIN_SNOW_LINE_M - m_lo) / (m_hi - m_lo)) as f32;
            self.snow_line = self.snow_line.max(floor);
        }
        self
    }
}

impl Look {
    /// Writes the look into the frame's uniforms.
    pub fn apply(&self, f: &mut super::shared::FrameData) {
        let m = &self.materials;
        f.look = [self.exposure, self.sun_intensity, self.detail, 0.0];
        f.rules0 = [m.grass_slope, m.rock_slope, m.snow_line, m.sand_line];
        f.rules1 = [m.snow_slope, m.softness, m.breakup, m.scree_curvature];
        let c = |v: [f32; 3]| [v[0], v[1], v[2], 0.0];
        f.rock = c(m.rock);
        f.grass = c(m.grass);
        f.scree = c(m.scree);
        f.sand = c(m.sand);
        f.snow = c(m.snow);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 236..1076 m hills get no snow; a 1,000..4,800 m range keeps the preset's line (3,736 m);
    /// a document without a height unit keeps the preset's fraction.
    #[test]
    fn snow_lies_no_lower_than_the_physical_snow_line_where_heights_are_in_metres() {
        use crate::pages::geometry::{HeightFormat, Units};
        let mut desc = crate::pages::DocumentDesc {
            width: 400,
            height: 300,
            format: HeightFormat::R32f,
            page_size: 128,
            height_min: 0.0,
            height_max: 5000.0,
            units: Units::metres(90.0),
        };
        let alpine = Materials::default();
        let hills = alpine.on_document(&desc, (236.0, 1076.0));
        assert!(desc.metres(236.0 + hills.snow_line * 840.0) >= MIN_SNOW_LINE_M - 1e-3);
        let alps = alpine.on_document(&desc, (1000.0, 4800.0));
        assert_eq!(alps.snow_line, alpine.snow_line);
        desc.units = Units::default();
        assert_eq!(alpine.on_document(&desc, (236.0, 1076.0)), alpine);
    }

    #[test]
    fn presets_are_valid_and_files_round_trip() {
        for (name, m) in PRESETS {
            m.check().unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(Materials::load(name).unwrap(), m);
        }
        let dir = std::env::temp_dir().join(format!("scarp-look-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.json");
        let mut m = PRESETS[1].1;
        m.snow_line = 0.5;
        m.save(&path).unwrap();
        assert_eq!(Materials::load(path.to_str().unwrap()).unwrap(), m);
        std::fs::write(&path, r#"{"rock_slope": 95}"#).unwrap();
        let e = Materials::load(path.to_str().unwrap()).unwrap_err();
        assert!(e.contains("rock_slope"), "{e}");
        std::fs::write(&path, r#"{"rok": [0, 0, 0]}"#).unwrap();
        assert!(Materials::load(path.to_str().unwrap()).is_err());
        assert!(Materials::load("nowhere").unwrap_err().contains("alpine"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

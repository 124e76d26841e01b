//! The erosion model's parameters: one struct for the CLI flags, journals and the editor, with
//! the documented defaults and the checks that refuse a bad value before any work.

use super::shared::ErosionPush;
use serde::{Deserialize, Serialize};

/// What an erosion brush simulates per instance (an erode step: over its region).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ErosionBrush {
    pub model: Model,
    /// Steps per instance.
    pub steps: u32,
    pub params: ErosionParams,
    /// Texels per height unit (None: the document's default, a quarter of its larger side).
    pub height_scale: Option<f32>,
}

/// The settings of an [`ErosionBrush`] beside its parameters, as journals write them:
/// `model`, `steps` and `height_scale`, with [`ErosionParams`] flattened beside them (serde
/// cannot flatten a struct that itself flattens into one that refuses unknown fields, so a
/// journal entry flattens the two).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunFields {
    pub model: Model,
    pub steps: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub height_scale: Option<f32>,
}

impl Default for RunFields {
    fn default() -> Self {
        ErosionBrush::default().run_fields()
    }
}

impl RunFields {
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// `e` with every `--flag-name` written `flag_name` (journals spell parameters so).
pub fn snake_flags(e: &str) -> String {
    e.split(' ')
        .map(|w| match w.strip_prefix("--") {
            Some(flag) => flag.replace('-', "_"),
            None => w.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Most steps one brush instance may take.
pub const MAX_BRUSH_STEPS: u32 = 10_000;

impl Default for ErosionBrush {
    fn default() -> Self {
        Self {
            model: Model::Both,
            steps: 50,
            params: DEFAULTS,
            height_scale: None,
        }
    }
}

impl ErosionBrush {
    /// The brush of journal fields `run` and `params`.
    pub fn of_fields(run: RunFields, params: ErosionParams) -> Self {
        Self {
            model: run.model,
            steps: run.steps,
            params,
            height_scale: run.height_scale,
        }
    }

    /// The journal fields beside the parameters.
    pub fn run_fields(&self) -> RunFields {
        RunFields {
            model: self.model,
            steps: self.steps,
            height_scale: self.height_scale,
        }
    }

    /// Checks every value; the error names the field (snake_case, as journals spell it).
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=MAX_BRUSH_STEPS).contains(&self.steps) {
            return Err(format!(
                "steps must be between 1 and {MAX_BRUSH_STEPS}, got {}",
                self.steps
            ));
        }
        if let Some(s) = self.height_scale {
            if !(s.is_finite() && s > 0.0) {
                return Err(format!("height_scale must be above 0, got {s}"));
            }
        }
        self.params.validate().map_err(|e| snake_flags(&e))
    }
}

/// Which steps a run takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Model {
    Hydraulic,
    Thermal,
    /// A hydraulic step, then a thermal step.
    Both,
}

impl Model {
    pub const ALL: [Model; 3] = [Model::Hydraulic, Model::Thermal, Model::Both];

    pub fn name(self) -> &'static str {
        match self {
            Model::Hydraulic => "hydraulic",
            Model::Thermal => "thermal",
            Model::Both => "both",
        }
    }

    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == s)
    }

    pub fn hydraulic(self) -> bool {
        self != Model::Thermal
    }

    pub fn thermal(self) -> bool {
        self != Model::Hydraulic
    }
}

/// Every parameter of the model (docs/erosion.md), in texel units; snake_case names are the
/// journal's (`pipe_area`), and the struct is `scarp erode`'s flags (`--pipe-area`) too.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default, deny_unknown_fields)]
pub struct ErosionParams {
    /// Time step.
    #[arg(long, default_value_t = DEFAULTS.dt)]
    pub dt: f32,
    /// Water added per unit time (times q).
    #[arg(long, default_value_t = DEFAULTS.rain)]
    pub rain: f32,
    /// Cross-section of a pipe.
    #[arg(long, default_value_t = DEFAULTS.pipe_area)]
    pub pipe_area: f32,
    #[arg(long, default_value_t = DEFAULTS.gravity)]
    pub gravity: f32,
    /// Sediment capacity constant.
    #[arg(long, default_value_t = DEFAULTS.capacity)]
    pub capacity: f32,
    /// Dissolving (erosion) rate; `dt · dissolve ≤ 1`.
    #[arg(long, default_value_t = DEFAULTS.dissolve)]
    pub dissolve: f32,
    /// Deposition rate; `dt · deposit ≤ 1`.
    #[arg(long, default_value_t = DEFAULTS.deposit)]
    pub deposit: f32,
    /// Evaporation rate; `dt · evaporation ≤ 1`.
    #[arg(long, default_value_t = DEFAULTS.evaporation)]
    pub evaporation: f32,
    /// Lowest tilt the capacity sees (flat ground still carries a little).
    #[arg(long, default_value_t = DEFAULTS.min_tilt)]
    pub min_tilt: f32,
    /// Water depth at and past which the capacity is full (shallower water carries less).
    #[arg(long, default_value_t = DEFAULTS.erosion_depth)]
    pub erosion_depth: f32,
    /// Thermal: steepest stable slope, degrees.
    #[arg(long, default_value_t = DEFAULTS.talus_angle)]
    pub talus_angle: f32,
    /// Thermal: fraction of the largest excess shed per step (times q), in [0, 1].
    #[arg(long, default_value_t = DEFAULTS.thermal_rate)]
    pub thermal_rate: f32,
}

impl Default for ErosionParams {
    fn default() -> Self {
        DEFAULTS
    }
}

impl ErosionParams {
    pub fn is_default(&self) -> bool {
        *self == DEFAULTS
    }
}

/// The documented defaults (docs/erosion.md), chosen so the default run on the default terrain
/// cuts gullies and leaves fans.
pub const DEFAULTS: ErosionParams = ErosionParams {
    dt: 0.05,
    rain: 0.02,
    pipe_area: 1.0,
    gravity: 9.81,
    capacity: 0.1,
    dissolve: 0.5,
    deposit: 1.0,
    evaporation: 0.02,
    min_tilt: 0.05,
    erosion_depth: 0.1,
    talus_angle: 55.0,
    thermal_rate: 0.1,
};

/// Named starting points (the editor's erosion panel): a model and its parameters.
pub const PRESETS: [(&str, Model, ErosionParams); 4] = [
    ("rain and talus (defaults)", Model::Both, DEFAULTS),
    ("gullies (rain only)", Model::Hydraulic, DEFAULTS),
    (
        "heavy rain",
        Model::Hydraulic,
        ErosionParams {
            rain: 0.05,
            capacity: 0.3,
            ..DEFAULTS
        },
    ),
    (
        "scree slopes (thermal only)",
        Model::Thermal,
        ErosionParams {
            talus_angle: 33.0,
            thermal_rate: 0.5,
            ..DEFAULTS
        },
    ),
];

impl ErosionParams {
    /// Checks every value; the error names the parameter (as its flag, `--dt`).
    pub fn validate(&self) -> Result<(), String> {
        let all = [
            ("dt", self.dt),
            ("rain", self.rain),
            ("pipe-area", self.pipe_area),
            ("gravity", self.gravity),
            ("capacity", self.capacity),
            ("dissolve", self.dissolve),
            ("deposit", self.deposit),
            ("evaporation", self.evaporation),
            ("min-tilt", self.min_tilt),
            ("erosion-depth", self.erosion_depth),
            ("talus-angle", self.talus_angle),
            ("thermal-rate", self.thermal_rate),
        ];
        if let Some((name, v)) = all.iter().find(|(_, v)| !v.is_finite()) {
            return Err(format!("--{name} must be a finite number, got {v}"));
        }
        if let Some((name, v)) = all.iter().find(|(_, v)| *v < 0.0) {
            return Err(format!("--{name} must not be negative, got {v}"));
        }
        if self.dt <= 0.0 {
            return Err(format!("--dt must be above 0, got {}", self.dt));
        }
        // The stable ranges (docs/erosion.md): beyond them a run turns heights of about 1 into
        // 1e29 (capacity 1e30) rather than eroding them.
        let upper = [
            ("dt", self.dt, 1.0),
            ("rain", self.rain, 1.0),
            ("pipe-area", self.pipe_area, 100.0),
            ("gravity", self.gravity, 100.0),
            ("capacity", self.capacity, 10.0),
            ("erosion-depth", self.erosion_depth, 100.0),
        ];
        if let Some((name, v, max)) = upper.iter().find(|(_, v, max)| v > max) {
            return Err(format!("--{name} must be at most {max}, got {v}"));
        }
        for (name, rate) in [
            ("dissolve", self.dissolve),
            ("deposit", self.deposit),
            ("evaporation", self.evaporation),
        ] {
            if self.dt * rate > 1.0 {
                return Err(format!(
                    "--dt x --{name} must be at most 1 (it is {} x {} = {})",
                    self.dt,
                    rate,
                    self.dt * rate
                ));
            }
        }
        if self.erosion_depth <= 0.0 {
            return Err(format!(
                "--erosion-depth must be above 0, got {}",
                self.erosion_depth
            ));
        }
        if self.min_tilt > 1.0 {
            return Err(format!(
                "--min-tilt is a sine: at most 1, got {}",
                self.min_tilt
            ));
        }
        if self.talus_angle >= 90.0 {
            return Err(format!(
                "--talus-angle must be below 90 degrees, got {}",
                self.talus_angle
            ));
        }
        if self.thermal_rate > 1.0 {
            return Err(format!(
                "--thermal-rate must be at most 1, got {}",
                self.thermal_rate
            ));
        }
        Ok(())
    }

    /// The kernels' constants for a region of `size` texels, q = 1 everywhere.
    pub fn push(&self, size: [u32; 2]) -> ErosionPush {
        ErosionPush {
            size: [size[0] as i32, size[1] as i32],
            dt: self.dt,
            rain: self.rain,
            pipe_area: self.pipe_area,
            gravity: self.gravity,
            capacity: self.capacity,
            dissolve: self.dissolve,
            deposit: self.deposit,
            evaporation: self.evaporation,
            min_tilt: self.min_tilt,
            erosion_depth: self.erosion_depth,
            talus_tan: self.talus_angle.to_radians().tan(),
            thermal_rate: self.thermal_rate,
            ..ErosionPush::default()
        }
    }
}

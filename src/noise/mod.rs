//! Noise: the lookup tables, the CPU twins of the GLSL noise library and GPU generation.
//!
//! Data flow: [`NoiseTables`] (from a table seed) are uploaded once by [`GpuNoise`] and decoded
//! once by [`CpuTables`]; [`NoiseSettings`] (what a user asks for, validated) becomes the
//! [`NoiseParams`] push-constant struct that both the GLSL kernel and the CPU twin read.

pub mod cpu;
pub mod gpu;
pub mod shared;
pub mod tables;

pub use cpu::CpuTables;
pub use gpu::{GpuNoise, GpuNoiseRun, NoiseError};
pub use tables::{NoiseTables, DEFAULT_TABLE_SEED};

use crate::noise::shared::NoiseParams;

/// The noise functions of the reference texts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NoiseKind {
    /// One band of Perlin gradient noise.
    Perlin,
    /// fBm ("turbulence"): sum of octaves (paper eq. 4).
    Fbm,
    /// Sum of |noise| octaves (eq. 7).
    Billowy,
    /// Sum of 1 - |noise| octaves (eq. 6).
    Ridged,
    /// Quilez: finer octaves damped by the summed (pseudo) slope.
    Iq,
    /// Swiss turbulence (Scape part 3).
    Swiss,
    /// Jordan turbulence (Scape part 3).
    Jordan,
    /// Erosive noise (paper section 5.4).
    Erosive,
}

impl NoiseKind {
    pub const ALL: [NoiseKind; 8] = [
        NoiseKind::Perlin,
        NoiseKind::Fbm,
        NoiseKind::Billowy,
        NoiseKind::Ridged,
        NoiseKind::Iq,
        NoiseKind::Swiss,
        NoiseKind::Jordan,
        NoiseKind::Erosive,
    ];

    /// `NOISE_*` of `src/shared_constants.rs`.
    pub fn index(self) -> i32 {
        use crate::shared_constants as k;
        match self {
            NoiseKind::Perlin => k::NOISE_PERLIN,
            NoiseKind::Fbm => k::NOISE_FBM,
            NoiseKind::Billowy => k::NOISE_BILLOWY,
            NoiseKind::Ridged => k::NOISE_RIDGED,
            NoiseKind::Iq => k::NOISE_IQ,
            NoiseKind::Swiss => k::NOISE_SWISS,
            NoiseKind::Jordan => k::NOISE_JORDAN,
            NoiseKind::Erosive => k::NOISE_EROSIVE,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            NoiseKind::Perlin => "perlin",
            NoiseKind::Fbm => "fbm",
            NoiseKind::Billowy => "billowy",
            NoiseKind::Ridged => "ridged",
            NoiseKind::Iq => "iq",
            NoiseKind::Swiss => "swiss",
            NoiseKind::Jordan => "jordan",
            NoiseKind::Erosive => "erosive",
        }
    }

    /// Whether the kind sums octaves (everything but plain Perlin).
    pub fn uses_octaves(self) -> bool {
        self != NoiseKind::Perlin
    }
}

/// Most octaves any noise accepts.
pub const MAX_OCTAVES: i32 = 32;

/// A noise request with every parameter of the texts: the one spelling of the noise parameters
/// (the CLI's flags, journal and preset brushes, the GPU's [`NoiseParams`] derive from it).
/// Defaults follow the texts (Scape parts 2 and 3, paper section 5.4; README's table) and live in
/// [`NoiseSettings::new`] alone. Read from a file, a missing field takes its default; a missing
/// `warp` (whose default depends on the kind) is resolved by [`NoiseSettings::with_kind_defaults`].
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize, clap::Args)]
#[serde(default = "NoiseSettings::unresolved")]
pub struct NoiseSettings {
    /// Noise function.
    #[arg(long, value_enum)]
    pub kind: NoiseKind,
    /// Noise units per texel: texel (x, y) samples offset + scale * (x, y).
    #[arg(long, default_value_t = CLI_DEFAULTS.scale)]
    pub scale: f32,
    /// Noise-space position of texel (0, 0), X,Y.
    #[arg(long, value_parser = parse_xy, default_value = "0,0", allow_hyphen_values = true)]
    pub offset: [f32; 2],
    /// Noise seed; octave i uses seed + i.
    #[arg(long, default_value_t = CLI_DEFAULTS.seed)]
    pub seed: i32,
    /// Octaves (1..=32); ignored by perlin.
    #[arg(long, default_value_t = CLI_DEFAULTS.octaves)]
    pub octaves: i32,
    /// Frequency ratio between octaves.
    #[arg(long, default_value_t = CLI_DEFAULTS.lacunarity)]
    pub lacunarity: f32,
    /// Amplitude ratio between octaves.
    #[arg(long, default_value_t = CLI_DEFAULTS.gain)]
    pub gain: f32,
    /// Swiss: gradient warp (default 0.15); Jordan: warp by finer octaves (default 0.35).
    #[arg(long, default_value_t = f32::NAN, hide_default_value = true)]
    pub warp: f32,
    /// Jordan: amplitude of the second octave.
    #[arg(long, default_value_t = CLI_DEFAULTS.gain1)]
    pub gain1: f32,
    /// Jordan: warp by the coarsest octave.
    #[arg(long, default_value_t = CLI_DEFAULTS.warp0)]
    pub warp0: f32,
    /// Jordan: damping by the coarsest octave.
    #[arg(long, default_value_t = CLI_DEFAULTS.damp0)]
    pub damp0: f32,
    /// Jordan: damping by finer octaves.
    #[arg(long, default_value_t = CLI_DEFAULTS.damp)]
    pub damp: f32,
    /// Jordan: how far damping can lower amplitudes.
    #[arg(long, default_value_t = CLI_DEFAULTS.damp_scale)]
    pub damp_scale: f32,
    /// Erosive: feature displacement along the ridge gradient.
    #[arg(long, default_value_t = CLI_DEFAULTS.alpha)]
    pub alpha: f32,
    /// Erosive: roughness near valleys.
    #[arg(long, default_value_t = CLI_DEFAULTS.beta)]
    pub beta: f32,
    /// Pre-warp amount (paper eq. 8 alpha); 0 = off.
    #[arg(long, default_value_t = CLI_DEFAULTS.prewarp_amount)]
    pub prewarp_amount: f32,
    /// Pre-warp frequency (eq. 8 beta).
    #[arg(long, default_value_t = CLI_DEFAULTS.prewarp_scale)]
    pub prewarp_scale: f32,
    /// Octaves of the pre-warp fBm.
    #[arg(long, default_value_t = CLI_DEFAULTS.prewarp_octaves)]
    pub prewarp_octaves: i32,
    /// T_post exponent, sign-preserving (eq. 5); 1 = off.
    #[arg(long, default_value_t = CLI_DEFAULTS.power)]
    pub power: f32,
}

/// Where `scarp noise`'s flags take their defaults (`warp` is left to the kind).
const CLI_DEFAULTS: NoiseSettings = NoiseSettings::new(NoiseKind::Fbm);

/// `X,Y`: two finite numbers (`--offset` and the CLI's other pairs).
pub fn parse_xy(s: &str) -> Result<[f32; 2], String> {
    let (a, b) = s
        .split_once(',')
        .ok_or_else(|| format!("'{s}' is not X,Y"))?;
    let num = |v: &str| -> Result<f32, String> {
        let x: f32 = v
            .trim()
            .parse()
            .map_err(|_| format!("'{v}' in '{s}' is not a number"))?;
        if !x.is_finite() {
            return Err(format!("'{v}' in '{s}' is not finite"));
        }
        Ok(x)
    };
    Ok([num(a)?, num(b)?])
}

impl NoiseSettings {
    /// Defaults of `kind`.
    pub const fn new(kind: NoiseKind) -> Self {
        Self {
            kind,
            scale: 1.0 / 256.0,
            offset: [0.0, 0.0],
            seed: 0,
            octaves: 10,
            lacunarity: 1.92,
            gain: 0.5,
            warp: if matches!(kind, NoiseKind::Jordan) {
                0.35
            } else {
                0.15
            },
            gain1: 0.8,
            warp0: 0.4,
            damp0: 1.0,
            damp: 0.8,
            damp_scale: 1.0,
            alpha: 0.15,
            beta: 1.1,
            prewarp_amount: 0.0,
            prewarp_scale: 0.5,
            prewarp_octaves: 4,
            power: 1.0,
        }
    }

    /// What a file's missing fields read as: fbm's defaults, `warp` left to the kind
    /// ([`Self::with_kind_defaults`]; NaN cannot come from JSON).
    fn unresolved() -> Self {
        Self {
            warp: f32::NAN,
            ..Self::new(NoiseKind::Fbm)
        }
    }

    /// Gives a `warp` left unset by a file its kind's default.
    pub fn with_kind_defaults(self) -> Self {
        if self.warp.is_nan() {
            Self {
                warp: Self::new(self.kind).warp,
                ..self
            }
        } else {
            self
        }
    }

    /// Checks every parameter; the error names the offending one (by its CLI flag).
    pub fn validate(&self) -> Result<(), String> {
        let finite = [
            ("--scale", self.scale),
            ("--offset x", self.offset[0]),
            ("--offset y", self.offset[1]),
            ("--lacunarity", self.lacunarity),
            ("--gain", self.gain),
            ("--warp", self.warp),
            ("--gain1", self.gain1),
            ("--warp0", self.warp0),
            ("--damp0", self.damp0),
            ("--damp", self.damp),
            ("--damp-scale", self.damp_scale),
            ("--alpha", self.alpha),
            ("--beta", self.beta),
            ("--prewarp-amount", self.prewarp_amount),
            ("--prewarp-scale", self.prewarp_scale),
            ("--power", self.power),
        ];
        if let Some((name, v)) = finite.iter().find(|(_, v)| !v.is_finite()) {
            return Err(format!("{name} must be a finite number, got {v}"));
        }
        if self.scale == 0.0 {
            return Err("--scale must not be 0".into());
        }
        // Bounds that keep every octave's input and amplitude finite in f32 (a scale of 1e38
        // made NaN heights); the shader's guard catches what remains.
        let bounded = [
            ("--scale", self.scale, 1e3),
            ("--offset x", self.offset[0], 1e9),
            ("--offset y", self.offset[1], 1e9),
            ("--lacunarity", self.lacunarity, 16.0),
            ("--gain", self.gain, 4.0),
            ("--gain1", self.gain1, 4.0),
            ("--warp", self.warp, 1e3),
            ("--warp0", self.warp0, 1e3),
            ("--damp0", self.damp0, 1e3),
            ("--damp", self.damp, 1e3),
            ("--damp-scale", self.damp_scale, 1e3),
            ("--alpha", self.alpha, 1e3),
            ("--beta", self.beta, 1e3),
            ("--prewarp-amount", self.prewarp_amount, 1e3),
            ("--prewarp-scale", self.prewarp_scale, 1e3),
            ("--power", self.power, 64.0),
        ];
        if let Some((name, v, b)) = bounded.iter().find(|(_, v, b)| v.abs() > *b) {
            return Err(format!("{name} must be between -{b} and {b}, got {v}"));
        }
        if !(1..=MAX_OCTAVES).contains(&self.octaves) {
            return Err(format!(
                "--octaves must be between 1 and {MAX_OCTAVES}, got {}",
                self.octaves
            ));
        }
        if !(0..=MAX_OCTAVES).contains(&self.prewarp_octaves) {
            return Err(format!(
                "--prewarp-octaves must be between 0 and {MAX_OCTAVES}, got {}",
                self.prewarp_octaves
            ));
        }
        if self.prewarp_amount != 0.0 && self.prewarp_octaves == 0 {
            return Err("--prewarp-amount needs --prewarp-octaves of at least 1".into());
        }
        if self.lacunarity <= 0.0 {
            return Err(format!(
                "--lacunarity must be positive, got {}",
                self.lacunarity
            ));
        }
        if self.power <= 0.0 {
            return Err(format!("--power must be positive, got {}", self.power));
        }
        Ok(())
    }

    /// The push-constant form both backends read.
    pub fn params(&self) -> NoiseParams {
        NoiseParams {
            offset: self.offset,
            scale: self.scale,
            seed: self.seed,
            octaves: self.octaves,
            lacunarity: self.lacunarity,
            gain: self.gain,
            warp: self.warp,
            gain1: self.gain1,
            warp0: self.warp0,
            damp0: self.damp0,
            damp: self.damp,
            damp_scale: self.damp_scale,
            alpha: self.alpha,
            beta: self.beta,
            prewarp_amount: self.prewarp_amount,
            prewarp_scale: self.prewarp_scale,
            prewarp_octaves: self.prewarp_octaves,
            power: self.power,
            kind: self.kind.index(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_the_bad_parameter() {
        let ok = NoiseSettings::new(NoiseKind::Jordan);
        assert!(ok.validate().is_ok());
        let e = NoiseSettings { octaves: 33, ..ok }.validate().unwrap_err();
        assert!(e.contains("--octaves"), "{e}");
        let e = NoiseSettings {
            gain: f32::NAN,
            ..ok
        }
        .validate()
        .unwrap_err();
        assert!(e.contains("--gain"), "{e}");
        let e = NoiseSettings { scale: 0.0, ..ok }.validate().unwrap_err();
        assert!(e.contains("--scale"), "{e}");
        let e = NoiseSettings {
            prewarp_amount: 1.0,
            prewarp_octaves: 0,
            ..ok
        }
        .validate()
        .unwrap_err();
        assert!(e.contains("--prewarp-octaves"), "{e}");
    }

    #[test]
    fn kind_indices_match_shared_glsl() {
        // The header every shader includes (generated by build.rs from shared_constants.rs).
        let glsl = include_str!(concat!(env!("OUT_DIR"), "/glsl/constants.glsl"));
        for kind in NoiseKind::ALL {
            let line = format!(
                "#define NOISE_{} {}\n",
                kind.name().to_uppercase(),
                kind.index()
            );
            assert!(glsl.contains(&line), "constants.glsl lacks `{line}`");
        }
    }
}

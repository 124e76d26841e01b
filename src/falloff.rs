//! Brush falloffs: the ramp every brush kernel, the erosion brush's rain weight and their CPU
//! twins share (`brushFalloff` of `shaders-glsl/include/brush.glsl`). A leaf: anyone may use it.

/// The falloff ramp of t = clamp((d - inner) / (radius - inner), 0, 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Falloff {
    /// 1 - t^2: paper eq. 2 when the inner radius is 0.
    Parabolic,
    /// 1 - t^2 (3 - 2t).
    Smooth,
    /// 1 - t.
    Linear,
    /// 1 - t^p, p = `falloff_power` (2 is parabolic; large p keeps full strength longer).
    Power,
}

impl Falloff {
    pub const ALL: [Falloff; 4] = [
        Falloff::Parabolic,
        Falloff::Smooth,
        Falloff::Linear,
        Falloff::Power,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Falloff::Parabolic => "parabolic",
            Falloff::Smooth => "smooth",
            Falloff::Linear => "linear",
            Falloff::Power => "power",
        }
    }

    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == s)
    }

    /// The falloff whose [`Self::index`] is `i`.
    pub fn from_index(i: i32) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.index() == i)
    }

    /// `FALLOFF_*` of `src/shared_constants.rs`.
    pub fn index(self) -> i32 {
        use crate::shared_constants as k;
        match self {
            Falloff::Parabolic => k::FALLOFF_PARABOLIC,
            Falloff::Smooth => k::FALLOFF_SMOOTH,
            Falloff::Linear => k::FALLOFF_LINEAR,
            Falloff::Power => k::FALLOFF_POWER,
        }
    }
}

/// `brushFalloff` of brush.glsl.
#[inline]
pub fn falloff(d: f32, radius: f32, inner_radius: f32, kind: Falloff, power: f32) -> f32 {
    let t = ((d - inner_radius) / (radius - inner_radius).max(1e-6)).clamp(0.0, 1.0);
    match kind {
        Falloff::Smooth => 1.0 - t * t * (3.0 - 2.0 * t),
        Falloff::Linear => 1.0 - t,
        Falloff::Power => 1.0 - t.powf(power),
        Falloff::Parabolic => 1.0 - t * t,
    }
}

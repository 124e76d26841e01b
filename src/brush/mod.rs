//! Brushes: a stroke's input samples become a Catmull-Rom spline, sampled into brush instances at
//! a fixed arc-length spacing (so results don't depend on input or frame rate); instances are
//! split into per-page tasks and applied in order, batched, on the GPU ([`gpu::BrushEngine`], on a field of the page store) or
//! by the CPU twin ([`cpu::CpuTerrain`]). Undo/redo keeps one step per stroke with copy-on-write
//! pages ([`crate::pages::history`]).

pub mod cpu;
pub mod error;
pub mod gpu;
pub mod path;
pub mod path_gpu;
pub mod shared;
pub mod stamp;
pub mod stroke;

use crate::brush::shared::BrushInstance;
pub use crate::falloff::Falloff;
use crate::noise::{NoiseKind, NoiseSettings};
use crate::pages::geometry::{DocumentDesc, PageId, Rect};

/// What a brush does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BrushType {
    /// h += strength x pressure x falloff (paper eq. 1, m = 1).
    Raise,
    /// h -= strength x pressure x falloff (m = -1).
    Lower,
    /// h += strength x pressure x falloff x B(offset + scale x p).
    Noise,
    /// Pulls heights toward the height under the stroke's first sample (measured before the
    /// stroke): h += clamp(strength x pressure x falloff, 0, 1) x (target - h).
    Level,
    /// Moves heights toward their 3x3 binomial average: h += clamp(s x falloff, -1, 1) x (avg - h).
    Smooth,
    /// Smooth with the strength negated: boosts small details.
    Contrast,
    /// Noise whose input is compressed by `dir_ratio` along an axis at `dir_angle_deg` to the
    /// local stroke direction (paper section 5.3).
    Directional,
    /// Adds a stamp image through each instance's transform (paper eq. 3):
    /// h += strength x pressure x falloff x S(T_i p).
    Stamp,
    /// Terraces: pulls heights toward steps `terrace_height` apart, as `level` pulls toward its
    /// target: with `t = h / H`, `k = floor(t)`, `f = t - k` and `e = (1 - sharpness) / 2`, the
    /// target is `H (k + g)`, `g = smoothstep(0.5 - e, 0.5 + e, f)` (a hard step at 0.5 when
    /// `e = 0`); h += clamp(strength x pressure x falloff, 0, 1) x (target - h).
    Terrace,
    /// Pulls heights toward a plane through the height under the stroke's first instance
    /// (measured before the stroke), tilted by `flatten_tilt` height units per 1000 texels
    /// along the stroke's first direction (0: level): h += clamp(strength x pressure x falloff,
    /// 0, 1) x (plane - h). See [`Plane::of_stroke`].
    Flatten,
    /// Pulls heights toward the plane through the heights under the stroke's first and last
    /// instances (measured before the stroke), sloping from the first to the last along the
    /// line between them, as flatten pulls: a ramp as wide as the brush. The editor paints it
    /// when the drag ends, from the drag's two ends.
    Ramp,
    /// Layers only: paints the selected layer's mask toward `value` (0..1), as `level` does
    /// toward its target.
    Mask,
    /// Layers only: lowers the selected layer's alpha (and an `add` layer's value) toward 0.
    Erase,
    /// Erosion (docs/erosion.md): each instance simulates `erosion.steps` steps in the square of
    /// half-side ceil(1.25 radius) around it, rain and shedding weighted by the falloff, then
    /// h += strength x pressure x (h_eroded - h) over the square. Runs outside the brush engine
    /// ([`crate::erosion::brush`]).
    Erode,
}

impl BrushType {
    pub const ALL: [BrushType; 11] = [
        BrushType::Raise,
        BrushType::Lower,
        BrushType::Noise,
        BrushType::Level,
        BrushType::Smooth,
        BrushType::Contrast,
        BrushType::Directional,
        BrushType::Stamp,
        BrushType::Terrace,
        BrushType::Flatten,
        BrushType::Ramp,
    ];

    /// Brushes that paint layers' alpha and mask only.
    pub const LAYER_ONLY: [BrushType; 2] = [BrushType::Mask, BrushType::Erase];

    /// Brushes that simulate rather than run a brush kernel.
    pub const SIMULATED: [BrushType; 1] = [BrushType::Erode];

    pub fn name(self) -> &'static str {
        match self {
            BrushType::Mask => "mask",
            BrushType::Erase => "erase",
            BrushType::Erode => "erode",
            BrushType::Raise => "raise",
            BrushType::Lower => "lower",
            BrushType::Noise => "noise",
            BrushType::Level => "level",
            BrushType::Smooth => "smooth",
            BrushType::Contrast => "contrast",
            BrushType::Directional => "directional",
            BrushType::Stamp => "stamp",
            BrushType::Terrace => "terrace",
            BrushType::Flatten => "flatten",
            BrushType::Ramp => "ramp",
        }
    }

    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .chain(Self::LAYER_ONLY)
            .chain(Self::SIMULATED)
            .find(|b| b.name() == s)
    }

    /// `BRUSH_*` of `src/shared_constants.rs` (the pointwise kernel's specialization); -1 for
    /// multi-tap brushes, which have their own kernel (brush/smooth.comp).
    pub fn shader_index(self) -> i32 {
        use crate::shared_constants as k;
        match self {
            BrushType::Raise | BrushType::Lower => k::BRUSH_RAISE,
            BrushType::Noise => k::BRUSH_NOISE,
            // Mask and erase run as level strokes on a layer's fields.
            BrushType::Level | BrushType::Mask | BrushType::Erase => k::BRUSH_LEVEL,
            BrushType::Directional => k::BRUSH_DIRECTIONAL,
            BrushType::Stamp => k::BRUSH_STAMP,
            BrushType::Terrace => k::BRUSH_TERRACE,
            BrushType::Flatten | BrushType::Ramp => k::BRUSH_PLANE,
            BrushType::Smooth | BrushType::Contrast | BrushType::Erode => -1,
        }
    }

    /// Which pointwise pipeline applies it: raise and lower share one, and the noise kind only
    /// matters to brushes that evaluate noise.
    pub fn kernel_key(self, kind: NoiseKind) -> (i32, i32) {
        (
            self.shader_index(),
            if self.uses_noise() { kind.index() } else { 0 },
        )
    }

    /// Whether the brush evaluates noise (its kernel is specialised per noise kind).
    pub fn uses_noise(self) -> bool {
        matches!(self, BrushType::Noise | BrushType::Directional)
    }

    /// Whether the brush pulls toward a [`Plane`] (flatten, ramp).
    pub fn is_plane(self) -> bool {
        matches!(self, BrushType::Flatten | BrushType::Ramp)
    }

    /// Whether the brush reads neighbouring texels (page halos; a pass applies its instances in
    /// turn over shared-memory tiles).
    pub fn is_multitap(self) -> bool {
        matches!(self, BrushType::Smooth | BrushType::Contrast)
    }
}

/// A brush and its parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct BrushSettings {
    pub brush: BrushType,
    pub radius: f32,
    pub inner_radius: f32,
    pub strength: f32,
    /// Instance spacing as a fraction of the radius.
    pub spacing: f32,
    pub falloff: Falloff,
    /// Exponent of the `power` falloff.
    pub falloff_power: f32,
    /// Noise of `noise` and `directional` brushes (kind and every parameter of `scarp noise`).
    pub noise: NoiseSettings,
    /// Directional brushes: compression axis relative to the stroke direction, degrees.
    pub dir_angle_deg: f32,
    /// Directional brushes: compression ratio (> 1 enlarges features along the axis).
    pub dir_ratio: f32,
    /// Stamp brushes: the image.
    pub stamp: Option<std::sync::Arc<stamp::Stamp>>,
    /// Stamp brushes: the stamp's side as a fraction of the brush diameter.
    pub stamp_scale: f32,
    /// Stamp brushes: rotate with the stroke (the angle is then relative to its direction).
    pub stamp_follow: bool,
    /// Mask brushes: the mask value painted toward (0 hides the layer, 1 shows it).
    pub value: f32,
    /// Mask brushes: procedural rules (docs/layers.md) that filter the brush texel by texel:
    /// each instance's weight is multiplied by the rules' mask of the height below the layer.
    pub rules: Option<crate::layers::MaskRules>,
    /// Erosion brushes: the model, steps per instance and the model's parameters.
    pub erosion: crate::erosion::ErosionBrush,
    /// Terrace brushes: the height between steps (document height units).
    pub terrace_height: f32,
    /// Terrace brushes: 0 (soft S-shaped risers) to 1 (vertical risers).
    pub terrace_sharpness: f32,
    /// Flatten brushes: the plane's rise along the stroke's first direction, height units per
    /// 1000 texels (negative: falling; 0: level).
    pub flatten_tilt: f32,
}

/// Largest |strength| of a brush: with the noise's bounds and at most
/// `journal::MAX_STROKE_INSTANCES` instances a stroke stays far inside f32.
pub const MAX_STRENGTH: f32 = 1e6;

/// The plane a flatten or ramp stroke pulls toward: height `at_origin + dot(p, gradient)` at
/// document texel `p`. Evaluated from the document's origin (one scalar and the gradient, which
/// the GPU pass carries in its level target and each instance's axis); at 65536 texels from the
/// origin with a gradient of 0.001 that rounds to about 1e-5 height units.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Plane {
    pub at_origin: f32,
    pub gradient: [f32; 2],
}

impl Plane {
    /// The plane of a flatten or ramp stroke of `instances`, from the heights before it
    /// (`height_at`, document texels): flatten's through the height under the first instance
    /// and rising `flatten_tilt` per 1000 texels along the first instance's direction; ramp's
    /// through the heights under the first and last instances, sloping along the line between
    /// them (level when they coincide). None for other brushes or no instances.
    pub fn of_stroke<E>(
        brush: &BrushSettings,
        instances: &[BrushInstance],
        mut height_at: impl FnMut(i32, i32) -> Result<f32, E>,
    ) -> Result<Option<Plane>, E> {
        let (Some(first), Some(last)) = (instances.first(), instances.last()) else {
            return Ok(None);
        };
        let texel = |b: &BrushInstance| (b.center[0].round() as i32, b.center[1].round() as i32);
        let (ax, ay) = texel(first);
        let h0 = height_at(ax, ay)?;
        let gradient = match brush.brush {
            BrushType::Flatten => {
                let rise = f64::from(brush.flatten_tilt) / 1000.0;
                let dir = f64::from(first.direction);
                [(rise * dir.cos()) as f32, (rise * dir.sin()) as f32]
            }
            BrushType::Ramp => {
                let (bx, by) = texel(last);
                let h1 = height_at(bx, by)?;
                let (dx, dy) = (f64::from(bx - ax), f64::from(by - ay));
                let len2 = dx * dx + dy * dy;
                if len2 == 0.0 {
                    [0.0, 0.0]
                } else {
                    let k = f64::from(h1 - h0) / len2;
                    [(k * dx) as f32, (k * dy) as f32]
                }
            }
            _ => return Ok(None),
        };
        let at_origin = h0 - (ax as f32 * gradient[0] + ay as f32 * gradient[1]);
        Ok(Some(Plane {
            at_origin,
            gradient,
        }))
    }

    /// The plane's height at texel (x, y); the CPU twin of `BRUSH_PLANE` in
    /// `pointwise_body.glsl`.
    pub fn at(&self, x: f32, y: f32) -> f32 {
        self.at_origin + (x * self.gradient[0] + y * self.gradient[1])
    }

    /// Gives `instances` the gradient in their axis, where the GPU pass reads it.
    pub fn mark(&self, instances: &mut [BrushInstance]) {
        for b in instances {
            b.axis = self.gradient;
        }
    }
}

/// The terrace target of height `h` (see [`BrushType::Terrace`]); the CPU twin of
/// `terraceTarget` in `pointwise_body.glsl`.
pub fn terrace_target(h: f32, step: f32, sharpness: f32) -> f32 {
    let t = h / step;
    let k = t.floor();
    let f = t - k;
    let e = 0.5 * (1.0 - sharpness);
    let g = if e > 0.0 {
        let x = ((f - (0.5 - e)) / (2.0 * e)).clamp(0.0, 1.0);
        x * x * (3.0 - 2.0 * x)
    } else if f >= 0.5 {
        1.0
    } else {
        0.0
    };
    step * (k + g)
}

impl BrushSettings {
    pub fn new(brush: BrushType) -> Self {
        Self {
            brush,
            radius: 64.0,
            inner_radius: 0.0,
            strength: 0.5,
            spacing: 0.25,
            falloff: Falloff::Parabolic,
            falloff_power: 2.0,
            noise: NoiseSettings::new(NoiseKind::Fbm),
            dir_angle_deg: if brush == BrushType::Stamp { 0.0 } else { 90.0 },
            dir_ratio: 3.0,
            stamp: None,
            stamp_scale: 1.0,
            stamp_follow: true,
            value: 0.0,
            rules: None,
            erosion: crate::erosion::ErosionBrush::default(),
            terrace_height: 0.05,
            terrace_sharpness: 0.7,
            flatten_tilt: 0.0,
        }
    }

    /// Signed strength factor: lower and contrast brushes push the other way.
    pub fn signed_strength(&self) -> f32 {
        if matches!(self.brush, BrushType::Lower | BrushType::Contrast) {
            -self.strength
        } else {
            self.strength
        }
    }

    /// Checks every parameter; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        self.validate_common()?;
        self.validate_brush_specific()?;
        if let Some(rules) = &self.rules {
            if self.brush != BrushType::Mask {
                return Err(format!(
                    "rules: only mask brushes take rules, not {}",
                    self.brush.name()
                ));
            }
            rules.check().map_err(|e| match e.starts_with("rules") {
                true => e,
                false => format!("rules.{e}"),
            })?;
        }
        if matches!(self.brush, BrushType::Noise | BrushType::Directional) {
            self.noise
                .validate()
                .map_err(|e| format!("noise: {}", e.trim_start_matches("--")))?;
        }
        Ok(())
    }

    /// Checks the parameters every brush uses: radii, strength, falloff power and spacing.
    fn validate_common(&self) -> Result<(), String> {
        let finite = [
            ("radius", self.radius),
            ("inner_radius", self.inner_radius),
            ("strength", self.strength),
            ("spacing", self.spacing),
        ];
        if let Some((name, v)) = finite.iter().find(|(_, v)| !v.is_finite()) {
            return Err(format!("{name} must be a finite number, got {v}"));
        }
        if self.strength.abs() > MAX_STRENGTH {
            return Err(format!(
                "strength must be between -{MAX_STRENGTH} and {MAX_STRENGTH} (height units per instance), got {}",
                self.strength
            ));
        }
        if !(0.5..=65536.0).contains(&self.radius) {
            return Err(format!(
                "radius must be between 0.5 and 65536 texels, got {}",
                self.radius
            ));
        }
        if self.inner_radius < 0.0 || self.inner_radius >= self.radius {
            return Err(format!(
                "inner_radius must be at least 0 and below radius ({}), got {}",
                self.radius, self.inner_radius
            ));
        }
        if !(self.falloff_power.is_finite() && (0.05..=64.0).contains(&self.falloff_power)) {
            return Err(format!(
                "falloff_power must be between 0.05 and 64, got {}",
                self.falloff_power
            ));
        }
        if !(0.01..=10.0).contains(&self.spacing) {
            return Err(format!(
                "spacing must be between 0.01 and 10 (a fraction of the radius), got {}",
                self.spacing
            ));
        }
        Ok(())
    }

    /// Checks the parameters only some brushes use: direction, stamp, mask value, erosion,
    /// terraces and tilt.
    fn validate_brush_specific(&self) -> Result<(), String> {
        if self.brush == BrushType::Directional {
            if !self.dir_angle_deg.is_finite() {
                return Err(format!(
                    "angle must be a finite number of degrees, got {}",
                    self.dir_angle_deg
                ));
            }
            if !(self.dir_ratio.is_finite() && (0.05..=64.0).contains(&self.dir_ratio)) {
                return Err(format!(
                    "ratio must be between 0.05 and 64, got {}",
                    self.dir_ratio
                ));
            }
        }
        if self.brush == BrushType::Stamp {
            if self.stamp.is_none() {
                return Err("stamp: a stamp brush needs a stamp image".into());
            }
            if !(self.stamp_scale.is_finite() && (0.01..=100.0).contains(&self.stamp_scale)) {
                return Err(format!(
                    "stamp_scale must be between 0.01 and 100, got {}",
                    self.stamp_scale
                ));
            }
            if !self.dir_angle_deg.is_finite() {
                return Err(format!(
                    "angle must be a finite number of degrees, got {}",
                    self.dir_angle_deg
                ));
            }
        }
        if self.brush == BrushType::Mask
            && !(self.value.is_finite() && (0.0..=1.0).contains(&self.value))
        {
            return Err(format!(
                "value must be in [0, 1] (the mask painted toward), got {}",
                self.value
            ));
        }
        if self.brush == BrushType::Erode {
            self.erosion.validate()?;
        }
        if self.brush == BrushType::Terrace {
            if !(self.terrace_height.is_finite() && self.terrace_height > 0.0) {
                return Err(format!(
                    "terrace_height must be above 0, got {}",
                    self.terrace_height
                ));
            }
            if !(0.0..=1.0).contains(&self.terrace_sharpness) {
                return Err(format!(
                    "terrace_sharpness must be in [0, 1], got {}",
                    self.terrace_sharpness
                ));
            }
        }
        if self.brush == BrushType::Flatten && !(-1000.0..=1000.0).contains(&self.flatten_tilt) {
            return Err(format!(
                "flatten_tilt must be in [-1000, 1000] height units per 1000 texels, got {}",
                self.flatten_tilt
            ));
        }
        Ok(())
    }
}

/// An erosion-brush instance of `b` with `brush`'s falloff.
pub fn erosion_instance(
    b: &BrushInstance,
    brush: &BrushSettings,
) -> crate::erosion::brush::Instance {
    crate::erosion::brush::Instance {
        center: b.center,
        radius: b.radius,
        inner_radius: b.inner_radius,
        strength: b.strength,
        falloff: brush.falloff,
        falloff_power: brush.falloff_power,
    }
}

/// Texels an instance can change.
pub fn reach(b: &BrushInstance) -> Rect {
    Rect::around(b.center, b.radius)
}

/// The instances that reach `rect`, in stroke order.
pub fn instances_reaching<'a>(
    instances: &'a [BrushInstance],
    rect: &'a Rect,
) -> impl Iterator<Item = &'a BrushInstance> + 'a {
    instances
        .iter()
        .filter(move |b| !reach(b).intersect(rect).is_empty())
}

/// The texel whose height a level stroke pulls toward: the one nearest the first instance (the
/// stroke's first sample).
pub fn level_texel(instances: &[BrushInstance]) -> Option<(i32, i32)> {
    instances
        .first()
        .map(|b| (b.center[0].round() as i32, b.center[1].round() as i32))
}

/// Pages any instance reaches, in page order.
pub fn touched_pages(desc: &DocumentDesc, instances: &[BrushInstance]) -> Vec<PageId> {
    let mut ids: Vec<PageId> = instances
        .iter()
        .flat_map(|b| desc.pages_in(&reach(b)))
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

//! Procedural masks: a layer's mask filled from the composite below it by height, slope and
//! curvature ranges, each with a soft edge (World Creator's distributions, Unity's brush mask
//! filters). GPU kernel `layers/mask_rules.comp`, CPU twin [`mask_at`].
//!
//! At texel (x, y) of the height `h` below the layer (taps clamped into the document):
//! * slope `s = ½·sqrt((h[x+1] − h[x−1])² + (h[y+1] − h[y−1])²)` (height units per texel),
//! * curvature `c = h[x−1] + h[x+1] + h[y−1] + h[y+1] − 4·h` (the 5-point Laplacian: negative
//!   on ridges and peaks, positive in valleys),
//! * each rule with range `[lo, hi]` and soft edge `e ≥ 0` gives
//!   `band(v) = ramp((v − (lo − e)) / e) · ramp(((hi + e) − v) / e)` with `ramp(t) = clamp(t, 0, 1)`
//!   (`e = 0`: a hard step, 1 inside the range), and the mask is the product of the rules given.
//! * a slope rule may be given in true degrees of the ground instead (`slope_degrees`): its
//!   edges become slopes `s(θ) = tan θ / vertical_scale` (the document's true scale), the soft
//!   edge below `s(lo) − s(lo − e)` and above `s(hi + e) − s(hi)`, so the mask is 1 from `lo`°
//!   to `hi`° and 0 past `e` degrees beyond (in between it ramps linearly in `s`). The kernel
//!   takes every band as (lo, hi, soft below, soft above).

use serde::{Deserialize, Serialize};

/// One range rule: `[lo, hi]` with a soft edge of `soft` on each side.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Band {
    pub lo: f32,
    pub hi: f32,
    #[serde(default)]
    pub soft: f32,
}

/// The rules a procedural mask combines (absent: no constraint).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaskRules {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<Band>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slope: Option<Band>,
    /// A slope band in true degrees of the ground (0 to 90), in place of `slope`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slope_degrees: Option<Band>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curvature: Option<Band>,
}

/// A band as the kernel takes it: lo, hi, soft edge below, soft edge above.
pub type Edges = [f32; 4];

/// The slope (height units per texel) of a ground `degrees` steep at `vertical_scale`.
fn slope_of(degrees: f32, vertical_scale: f32) -> f32 {
    degrees.clamp(0.0, MAX_DEGREES).to_radians().tan() / vertical_scale
}

/// The steepest slope a degree band reaches (tan of 90° is not finite).
const MAX_DEGREES: f32 = 89.9;

impl Band {
    /// 1 inside `[lo, hi]`, falling linearly to 0 over `soft` outside it.
    pub fn weight(&self, v: f32) -> f32 {
        weight(self.edges(), v)
    }

    /// The band as the kernel takes it, the same soft edge on both sides.
    pub fn edges(&self) -> Edges {
        [self.lo, self.hi, self.soft, self.soft]
    }

    /// A band in degrees of slope as the kernel's band of slopes at `vertical_scale`.
    fn degree_edges(&self, vertical_scale: f32) -> Edges {
        let s = |d: f32| slope_of(d, vertical_scale);
        let (lo, hi) = (s(self.lo), s(self.hi));
        [
            lo,
            hi,
            lo - s(self.lo - self.soft),
            s(self.hi + self.soft) - hi,
        ]
    }

    fn check(&self, what: &str) -> Result<(), String> {
        if !(self.lo.is_finite() && self.hi.is_finite() && self.soft.is_finite()) {
            return Err(format!("{what}: lo, hi and soft must be finite"));
        }
        if self.lo > self.hi {
            return Err(format!(
                "{what}: lo ({}) is above hi ({})",
                self.lo, self.hi
            ));
        }
        if self.soft < 0.0 {
            return Err(format!(
                "{what}: soft must be at least 0, got {}",
                self.soft
            ));
        }
        Ok(())
    }
}

/// 1 inside `[e[0], e[1]]`, falling linearly to 0 over `e[2]` below and `e[3]` above (kernel:
/// `band`, the same operations).
pub fn weight(e: Edges, v: f32) -> f32 {
    ramp(v - (e[0] - e[2]), e[2]) * ramp((e[1] + e[3]) - v, e[3])
}

/// `clamp(d / e, 0, 1)`, a step at 0 when `e` is 0 (kernel: the same expression).
fn ramp(d: f32, e: f32) -> f32 {
    if e > 0.0 {
        (d / e).clamp(0.0, 1.0)
    } else if d >= 0.0 {
        1.0
    } else {
        0.0
    }
}

impl MaskRules {
    /// Checks every rule; the error names the rule.
    pub fn check(&self) -> Result<(), String> {
        if self.height.is_none()
            && self.slope.is_none()
            && self.slope_degrees.is_none()
            && self.curvature.is_none()
        {
            return Err(
                "rules: give at least one of height, slope, slope_degrees, curvature".into(),
            );
        }
        if self.slope.is_some() && self.slope_degrees.is_some() {
            return Err("rules: give slope or slope_degrees, not both".into());
        }
        for (what, b) in [
            ("height", self.height),
            ("slope", self.slope),
            ("slope_degrees", self.slope_degrees),
            ("curvature", self.curvature),
        ] {
            if let Some(b) = b {
                b.check(what)?;
            }
        }
        if let Some(b) = self.slope_degrees {
            if b.lo < 0.0 || b.hi > 90.0 {
                return Err(format!(
                    "slope_degrees: lo and hi must lie within 0 to 90 degrees, got {} to {}",
                    b.lo, b.hi
                ));
            }
        }
        Ok(())
    }

    /// The bands as the kernel takes them, a slope in degrees made a slope at
    /// `vertical_scale` (the document's true scale): height, slope, curvature.
    pub fn edges(&self, vertical_scale: f32) -> [Option<Edges>; 3] {
        let slope = match (self.slope, self.slope_degrees) {
            (Some(b), _) => Some(b.edges()),
            (None, Some(b)) => Some(b.degree_edges(vertical_scale)),
            (None, None) => None,
        };
        [
            self.height.map(|b| b.edges()),
            slope,
            self.curvature.map(|b| b.edges()),
        ]
    }
}

/// The mask at texel (x, y) of a `w` x `h` document whose heights `at` gives, its slope rule
/// read at `vertical_scale` (CPU twin of `mask_rules.comp`, same operations in the same order).
pub fn mask_at(
    rules: &MaskRules,
    vertical_scale: f32,
    size: [i32; 2],
    at: impl Fn(i32, i32) -> f32,
    x: i32,
    y: i32,
) -> f32 {
    let tap = |dx: i32, dy: i32| {
        at(
            (x + dx).clamp(0, size[0] - 1),
            (y + dy).clamp(0, size[1] - 1),
        )
    };
    let c = tap(0, 0);
    let (l, r, u, d) = (tap(-1, 0), tap(1, 0), tap(0, -1), tap(0, 1));
    let gx = r - l;
    let gy = d - u;
    let slope = 0.5 * (gx * gx + gy * gy).sqrt();
    let curvature = ((l + r) + (u + d)) - 4.0 * c;
    let mut m = 1.0;
    for (edges, v) in rules
        .edges(vertical_scale)
        .into_iter()
        .zip([c, slope, curvature])
    {
        if let Some(e) = edges {
            m *= weight(e, v);
        }
    }
    m
}

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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curvature: Option<Band>,
}

impl Band {
    /// 1 inside `[lo, hi]`, falling linearly to 0 over `soft` outside it.
    pub fn weight(&self, v: f32) -> f32 {
        ramp(v - (self.lo - self.soft), self.soft) * ramp((self.hi + self.soft) - v, self.soft)
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
        if self.height.is_none() && self.slope.is_none() && self.curvature.is_none() {
            return Err("rules: give at least one of height, slope, curvature".into());
        }
        for (what, b) in [
            ("height", self.height),
            ("slope", self.slope),
            ("curvature", self.curvature),
        ] {
            if let Some(b) = b {
                b.check(what)?;
            }
        }
        Ok(())
    }
}

/// The mask at texel (x, y) of a `w` x `h` document whose heights `at` gives (CPU twin of
/// `mask_rules.comp`, same operations in the same order).
pub fn mask_at(
    rules: &MaskRules,
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
    if let Some(b) = rules.height {
        m *= b.weight(c);
    }
    if let Some(b) = rules.slope {
        m *= b.weight(slope);
    }
    if let Some(b) = rules.curvature {
        m *= b.weight(curvature);
    }
    m
}

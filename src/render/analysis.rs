//! The viewport's analysis overlays (`ViewSettings::slope`, `contours`, `curvature`,
//! `materials_map`; docs/render.md, docs/maps.md):
//! the slope heat map's colours, the CPU twin of `slopeColour` in `render/terrain.frag`, and
//! the overlay names `scarp render --overlay` takes.

/// Walkable slope (degrees) when none is given: a common character-controller limit.
pub const DEFAULT_WALKABLE: f32 = 35.0;

/// The heat-map colour (linear RGB) of a `deg`-degree slope with slopes up to `walkable`
/// walkable: green to yellow up to it, orange to red to purple above.
pub fn slope_colour(deg: f32, walkable: f32) -> [f32; 3] {
    let mix = |a: [f32; 3], b: [f32; 3], t: f32| [0, 1, 2].map(|k| a[k] + (b[k] - a[k]) * t);
    if deg <= walkable {
        let t = (deg / walkable.max(1e-3)).clamp(0.0, 1.0);
        return mix([0.10, 0.55, 0.20], [0.95, 0.90, 0.20], t);
    }
    let t = ((deg - walkable) / (90.0 - walkable).max(1e-3)).clamp(0.0, 1.0);
    if t < 0.5 {
        mix([0.95, 0.45, 0.10], [0.85, 0.10, 0.10], 2.0 * t)
    } else {
        mix([0.85, 0.10, 0.10], [0.45, 0.10, 0.60], 2.0 * t - 1.0)
    }
}

/// The curvature map's colour (linear RGB) at `k`, the curvature over the map's full-colour
/// curvature (clamped to -1..1): blue where concave (k > 0), orange where convex, pale grey at
/// 0. The twin of the ramp in `render/shade.comp`.
pub fn curvature_colour(k: f32) -> [f32; 3] {
    let k = k.clamp(-1.0, 1.0);
    let flat = [0.86, 0.86, 0.82];
    let to = if k > 0.0 {
        [0.10, 0.30, 0.85]
    } else {
        [0.85, 0.38, 0.10]
    };
    [0, 1, 2].map(|i| flat[i] + (to[i] - flat[i]) * k.abs())
}

/// An overlay as `scarp render --overlay` names it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Overlay {
    /// `slope[:WALKABLE_DEGREES]`.
    Slope(f32),
    /// `contours:INTERVAL` (height units).
    Contours(f32),
    /// `curvature[:PER_METRE]`: full colour at this curvature (1/m).
    Curvature(f32),
    /// `materials`: the material weights by the look's rules.
    Materials,
    /// `drainage`: D8 drainage area, blue by its log (a field the caller computes:
    /// [`crate::maps::flow`]).
    Drainage,
    /// `wetness`: topographic wetness, blue from its median to its largest (likewise).
    Wetness,
    /// `profile`: profile curvature, teal where concave, orange where convex, full at
    /// [`DEFAULT_CURVATURE`] (a field the caller computes).
    Profile,
    /// `plan`: plan curvature, teal where converging, orange where diverging (likewise).
    Plan,
    /// `erosion`: erosion's wear and deposits (src/wear.rs), orange where more was worn than laid
    /// down, teal where more was laid down, full at the largest (a field the caller reads).
    Erosion,
}

/// Curvature (1/m) at which the curvature map's colours are full when none is given: a
/// hollow 10 m across and 0.25 m deep.
pub const DEFAULT_CURVATURE: f32 = 0.01;

impl std::str::FromStr for Overlay {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (name, value) = match s.split_once(':') {
            Some((n, v)) => (n, Some(v)),
            None => (s, None),
        };
        let number = |what: &str, v: &str, ok: fn(f32) -> bool| -> Result<f32, String> {
            v.parse::<f32>()
                .ok()
                .filter(|x| x.is_finite() && ok(*x))
                .ok_or_else(|| format!("{name}: {what}, got '{v}'"))
        };
        match (name, value) {
            ("slope", None) => Ok(Overlay::Slope(DEFAULT_WALKABLE)),
            ("slope", Some(v)) => number("a walkable angle between 0 and 90 degrees", v, |x| {
                (0.0..90.0).contains(&x)
            })
            .map(Overlay::Slope),
            ("contours", Some(v)) => {
                number("an interval above 0 (height units)", v, |x| x > 0.0).map(Overlay::Contours)
            }
            ("contours", None) => Err("contours needs an interval: contours:INTERVAL".into()),
            ("curvature", None) => Ok(Overlay::Curvature(DEFAULT_CURVATURE)),
            ("curvature", Some(v)) => {
                number("a curvature above 0 (1/m)", v, |x| x > 0.0).map(Overlay::Curvature)
            }
            ("materials", None) => Ok(Overlay::Materials),
            ("drainage", None) => Ok(Overlay::Drainage),
            ("wetness", None) => Ok(Overlay::Wetness),
            ("profile", None) => Ok(Overlay::Profile),
            ("plan", None) => Ok(Overlay::Plan),
            ("erosion", None) => Ok(Overlay::Erosion),
            _ => Err(format!(
                "unknown overlay '{s}' (slope[:WALKABLE_DEGREES], contours:INTERVAL, \
                 curvature[:PER_METRE], materials, drainage, wetness, profile, plan, erosion)"
            )),
        }
    }
}

impl Overlay {
    /// Whether it is a map the caller computes into a tinting field (drainage, wetness,
    /// profile and plan curvature, erosion's wear and deposits), not a view setting.
    pub fn is_field(self) -> bool {
        matches!(
            self,
            Overlay::Drainage
                | Overlay::Wetness
                | Overlay::Profile
                | Overlay::Plan
                | Overlay::Erosion
        )
    }

    /// Turns this overlay on in `view` (the field maps are a tinting field instead: see
    /// [`Overlay::is_field`]).
    pub fn apply(self, view: &mut super::ViewSettings) {
        match self {
            Overlay::Slope(w) => view.slope = Some(w),
            Overlay::Contours(i) => view.contours = Some(i),
            Overlay::Curvature(c) => view.curvature = Some(c),
            Overlay::Materials => view.materials_map = true,
            Overlay::Drainage
            | Overlay::Wetness
            | Overlay::Profile
            | Overlay::Plan
            | Overlay::Erosion => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlay_names_parse_and_bad_values_are_named() {
        assert_eq!("slope".parse(), Ok(Overlay::Slope(DEFAULT_WALKABLE)));
        assert_eq!("slope:30".parse(), Ok(Overlay::Slope(30.0)));
        assert_eq!("contours:0.05".parse(), Ok(Overlay::Contours(0.05)));
        assert_eq!(
            "curvature".parse(),
            Ok(Overlay::Curvature(DEFAULT_CURVATURE))
        );
        assert_eq!("curvature:0.2".parse(), Ok(Overlay::Curvature(0.2)));
        assert_eq!("materials".parse(), Ok(Overlay::Materials));
        assert_eq!("wetness".parse(), Ok(Overlay::Wetness));
        assert_eq!("plan".parse(), Ok(Overlay::Plan));
        for (bad, says) in [
            ("curvature:0", "a curvature above 0"),
            ("curvature:x", "a curvature above 0"),
            ("slope:95", "walkable"),
            ("contours", "interval"),
            ("contours:-1", "interval"),
            ("heat", "unknown overlay"),
        ] {
            let e = bad.parse::<Overlay>().unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn the_heat_map_is_continuous_below_and_changes_colour_at_the_walkable_slope() {
        let w = 30.0;
        assert_eq!(slope_colour(0.0, w), [0.10, 0.55, 0.20]);
        let below = slope_colour(w, w);
        let above = slope_colour(w + 0.01, w);
        assert!((below[2] - above[2]).abs() < 0.2 && (below[1] - above[1]).abs() > 0.3);
    }
}

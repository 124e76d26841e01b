//! How a document was last seen, kept in its project and in journals (`view`): the camera, the
//! sun, the sea, the vertical scale, the look, the heights the look's altitude rules span and the
//! analysis overlays. The editor writes it on save and takes it back on open (a journal may
//! carry one for the editor to open with). Heights are in the document's height units, angles
//! in degrees.

use super::camera::{Camera, CameraMode};
use super::lighting::Sun;
use super::look::Look;
use super::ViewSettings;
use glam::Vec3;
use serde::{Deserialize, Serialize};

/// The view of a document as saved.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedView {
    pub camera: SavedCamera,
    /// World y per height unit (the exaggeration is this over the document's true scale).
    pub vertical_scale: f32,
    /// None: the fixed light of old, no shadows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sun: Option<Sun>,
    /// The sea's level, height units. None: no sea.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sea_level: Option<f32>,
    /// None: the plain colours.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub look: Option<Look>,
    /// The heights (height units) the look's altitude rules span, fixed when the document was
    /// first opened: a local edit never recolours far terrain, before or after a reopen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub altitude_range: Option<[f32; 2]>,
    /// The slope map's walkable angle, degrees. None: off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slope: Option<f32>,
    /// The contour interval, height units. None: off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contours: Option<f32>,
    /// The editor's top-down map view was on (`camera` is the 3D camera it goes back to).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub map_view: bool,
}

/// The camera as saved (world units: texels across, height x vertical scale up).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedCamera {
    /// Flying (true) or orbiting its target.
    #[serde(default)]
    pub fly: bool,
    pub target: [f32; 3],
    pub distance: f32,
    /// Heading around the vertical and the angle below the horizon, degrees.
    pub yaw_degrees: f32,
    pub pitch_degrees: f32,
    /// The eye while flying.
    pub position: [f32; 3],
    pub fov_y_degrees: f32,
}

impl SavedView {
    /// What `camera` sees with `view`.
    pub fn of(camera: &Camera, view: &ViewSettings) -> Self {
        Self {
            camera: SavedCamera {
                fly: camera.mode == CameraMode::Fly,
                target: camera.target.to_array(),
                distance: camera.distance,
                yaw_degrees: camera.yaw.to_degrees(),
                pitch_degrees: camera.pitch.to_degrees(),
                position: camera.position.to_array(),
                fov_y_degrees: camera.fov_y.to_degrees(),
            },
            vertical_scale: view.vertical_scale,
            sun: view.sun,
            sea_level: view.sea_level,
            look: view.look,
            altitude_range: view.altitude_range.map(|(lo, hi)| [lo, hi]),
            slope: view.slope,
            contours: view.contours,
            map_view: false,
        }
    }

    /// The camera it saved.
    pub fn camera(&self) -> Camera {
        let c = &self.camera;
        Camera {
            mode: if c.fly {
                CameraMode::Fly
            } else {
                CameraMode::Orbit
            },
            target: Vec3::from_array(c.target),
            distance: c.distance,
            yaw: c.yaw_degrees.to_radians(),
            pitch: c.pitch_degrees.to_radians(),
            position: Vec3::from_array(c.position),
            fov_y: c.fov_y_degrees.to_radians(),
        }
    }

    /// `view` with what this saved applied (the rest of `view` as it was).
    pub fn apply(&self, view: &mut ViewSettings) {
        view.vertical_scale = self.vertical_scale;
        view.sun = self.sun;
        view.sea_level = self.sea_level;
        view.look = self.look;
        view.altitude_range = self.altitude_range.map(|[lo, hi]| (lo, hi));
        view.slope = self.slope;
        view.contours = self.contours;
    }

    /// Every value in its range, the error naming the field.
    pub fn check(&self) -> Result<(), String> {
        let c = &self.camera;
        let finite = c.target.iter().chain(&c.position).all(|v| v.is_finite())
            && [c.distance, c.yaw_degrees, c.pitch_degrees]
                .iter()
                .all(|v| v.is_finite());
        if !finite {
            return Err("view.camera: every number must be finite".into());
        }
        if c.distance <= 0.0 {
            return Err(format!(
                "view.camera.distance must be positive, got {}",
                c.distance
            ));
        }
        if !(1.0..=170.0).contains(&c.fov_y_degrees) {
            return Err(format!(
                "view.camera.fov_y_degrees must be between 1 and 170, got {}",
                c.fov_y_degrees
            ));
        }
        if !(self.vertical_scale.is_finite() && self.vertical_scale > 0.0) {
            return Err(format!(
                "view.vertical_scale must be positive, got {}",
                self.vertical_scale
            ));
        }
        if let Some(sun) = self.sun {
            if !(sun.azimuth.is_finite() && (1.0..=90.0).contains(&sun.elevation)) {
                return Err(format!(
                    "view.sun: the elevation must be between 1 and 90 degrees, got {}",
                    sun.elevation
                ));
            }
        }
        if self.sea_level.is_some_and(|h| !h.is_finite()) {
            return Err("view.sea_level must be finite".into());
        }
        if let Some(look) = &self.look {
            look.materials
                .check()
                .map_err(|e| format!("view.look.materials: {e}"))?;
            if !(look.exposure.is_finite() && look.exposure > 0.0) {
                return Err("view.look.exposure must be positive".into());
            }
        }
        if let Some([lo, hi]) = self.altitude_range {
            if !(lo.is_finite() && hi.is_finite() && lo < hi) {
                return Err("view.altitude_range must be two finite heights, low first".into());
            }
        }
        if self.slope.is_some_and(|w| !(1.0..=89.0).contains(&w)) {
            return Err("view.slope must be between 1 and 89 degrees".into());
        }
        if self.contours.is_some_and(|i| !(i.is_finite() && i > 0.0)) {
            return Err("view.contours must be a positive interval".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A view survives JSON: the camera, the sun, the sea, the look and the overlays come back
    /// as they went, and a bad one is refused by field.
    #[test]
    fn a_saved_view_round_trips_and_bad_values_are_named() {
        let camera = Camera {
            target: Vec3::new(100.0, 20.0, 300.0),
            yaw: 1.1,
            ..Camera::default()
        };
        let view = ViewSettings {
            vertical_scale: 0.5,
            sun: Some(Sun {
                azimuth: 120.0,
                elevation: 40.0,
            }),
            sea_level: Some(0.2),
            look: Some(Look::default()),
            altitude_range: Some((0.1, 0.9)),
            contours: Some(0.05),
            ..ViewSettings::default()
        };
        let saved = SavedView::of(&camera, &view);
        saved.check().unwrap();
        let text = serde_json::to_string(&saved).unwrap();
        let back: SavedView = serde_json::from_str(&text).unwrap();
        assert_eq!(back, saved);
        let again = back.camera();
        assert!((again.yaw - 1.1).abs() < 1e-6 && again.target == camera.target);
        let mut shown = ViewSettings::default();
        back.apply(&mut shown);
        assert_eq!(shown.sun, view.sun);
        assert_eq!(shown.sea_level, Some(0.2));
        assert_eq!(shown.altitude_range, Some((0.1, 0.9)));
        assert_eq!(shown.vertical_scale, 0.5);
        assert!(!text.contains("map_view"), "off is not written: {text}");
        let map = SavedView {
            map_view: true,
            ..saved
        };
        let text = serde_json::to_string(&map).unwrap();
        assert_eq!(serde_json::from_str::<SavedView>(&text).unwrap(), map);
        let bad = SavedView {
            vertical_scale: -1.0,
            ..saved
        };
        assert!(bad.check().unwrap_err().contains("vertical_scale"));
        assert!(
            serde_json::from_str::<SavedView>(&text.replace("\"distance\"", "\"distanse\""))
                .is_err()
        );
    }
}

//! What places world points on the window: the camera's view-projection and the window's size;
//! the outlines drawn over the terrain are polylines through it.

use crate::render::camera::{screen_point, Camera};
use glam::{Mat4, Vec3};

/// The camera's view-projection and the window's size (pixels).
#[derive(Clone, Copy, Debug)]
pub struct Screen {
    vp: Mat4,
    viewport: [u32; 2],
}

impl Screen {
    /// The screen `camera` draws on a `viewport`-sized window.
    pub fn of(camera: &Camera, viewport: [u32; 2]) -> Self {
        Self {
            vp: camera.view_proj(viewport),
            viewport,
        }
    }

    /// Where world point `p` lies on the window (None: behind the camera).
    pub fn point(&self, p: Vec3) -> Option<[f32; 2]> {
        screen_point(&self.vp, self.viewport, p).map(|s| [s.x, s.y])
    }

    /// The world polyline through `points` on the window, each segment in 32 steps so it
    /// follows the perspective; None when a point lies behind the camera.
    pub fn polyline(&self, points: &[Vec3]) -> Option<Vec<[f32; 2]>> {
        let steps = points
            .windows(2)
            .flat_map(|w| (0..32).map(move |i| w[0].lerp(w[1], i as f32 / 32.0)));
        steps
            .chain(points.last().copied())
            .map(|p| self.point(p))
            .collect()
    }
}

/// A ramp being dragged from `a` to `b` with a brush of `radius`: its centre line and its
/// edges a radius to either side, on the window.
pub fn ramp_outline(screen: &Screen, a: Vec3, b: Vec3, radius: f32) -> Vec<Vec<[f32; 2]>> {
    let along = Vec3::new(b.x - a.x, 0.0, b.z - a.z);
    let side = Vec3::new(-along.z, 0.0, along.x).normalize_or_zero() * radius;
    [Vec3::ZERO, side, -side]
        .iter()
        .filter_map(|&o| screen.polyline(&[a + o, b + o]))
        .collect()
}

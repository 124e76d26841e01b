//! The camera: orbit (around a target) and fly (WASD + mouse look) modes, zoom toward the cursor,
//! frame-all; reverse-Z infinite perspective with Vulkan's downward y; picking by unprojecting a
//! depth-buffer sample.

use glam::camera::rh;
use glam::{Mat4, Vec2, Vec3};

/// Near plane distance (world units = texels).
pub const NEAR: f32 = 0.5;

/// The map view's lens: narrow, so the far-away camera sees the document near orthographically.
const MAP_FOV_DEGREES: f32 = 2.0;

/// The map view looks down this steeply (radians: a hair off vertical, so "up" on the screen
/// stays north).
const MAP_PITCH: f32 = std::f32::consts::FRAC_PI_2 - 1e-3;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CameraMode {
    Orbit,
    Fly,
}

/// The part of a larger image one target draws: big images are drawn in strips, each a
/// window of the whole view (the same nodes drawn, the same pixels).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageWindow {
    /// The whole image, pixels.
    pub full: [u32; 2],
    /// The window's top-left pixel in the whole image.
    pub origin: [u32; 2],
    /// The window's size, pixels.
    pub size: [u32; 2],
}

impl ImageWindow {
    /// The whole of a `size` image.
    pub fn whole(size: [u32; 2]) -> Self {
        Self {
            full: size,
            origin: [0, 0],
            size,
        }
    }

    /// The clip-space transform that takes the whole image's view-projection to the window's:
    /// the window's pixels fill the target's viewport.
    pub fn crop(&self) -> Mat4 {
        let axis = |i: usize| {
            let (full, size) = (self.full[i] as f32, self.size[i].max(1) as f32);
            let scale = full / size;
            (scale, (full - 2.0 * self.origin[i] as f32) / size - 1.0)
        };
        let ((sx, tx), (sy, ty)) = (axis(0), axis(1));
        Mat4::from_translation(Vec3::new(tx, ty, 0.0)) * Mat4::from_scale(Vec3::new(sx, sy, 1.0))
    }
}

/// Where the camera is and how it looks.
#[derive(Clone, Copy, Debug)]
pub struct Camera {
    pub mode: CameraMode,
    /// Orbit centre.
    pub target: Vec3,
    /// Distance from the target (orbit).
    pub distance: f32,
    /// Heading around +y (radians).
    pub yaw: f32,
    /// Elevation (radians, positive looks down).
    pub pitch: f32,
    /// Eye position in fly mode.
    pub position: Vec3,
    pub fov_y: f32,
}

impl Default for Camera {
    fn default() -> Self {
        Self {
            mode: CameraMode::Orbit,
            target: Vec3::ZERO,
            distance: 100.0,
            yaw: 0.6,
            pitch: 0.6,
            position: Vec3::ZERO,
            fov_y: 50f32.to_radians(),
        }
    }
}

impl Camera {
    /// Unit vector from the eye towards what it looks at.
    pub fn forward(&self) -> Vec3 {
        let (sy, cy) = self.yaw.sin_cos();
        let (sp, cp) = self.pitch.sin_cos();
        Vec3::new(cp * sy, -sp, -cp * cy)
    }

    pub fn eye(&self) -> Vec3 {
        match self.mode {
            CameraMode::Orbit => self.target - self.forward() * self.distance,
            CameraMode::Fly => self.position,
        }
    }

    /// A camera given by eye and target points (`scarp render --camera`).
    pub fn look_at(eye: Vec3, target: Vec3) -> Self {
        let d = target - eye;
        let distance = d.length().max(1e-3);
        let f = d / distance;
        Self {
            target,
            distance,
            yaw: f.x.atan2(-f.z),
            pitch: (-f.y).clamp(-1.0, 1.0).asin(),
            position: eye,
            ..Self::default()
        }
    }

    /// Orbit view of the whole document (`width` x `height` texels, heights lo..hi in world y).
    pub fn frame_all(&mut self, width: u32, height: u32, lo: f32, hi: f32) {
        let (w, h) = (width as f32, height as f32);
        self.mode = CameraMode::Orbit;
        self.target = Vec3::new((w - 1.0) * 0.5, (lo + hi) * 0.5, (h - 1.0) * 0.5);
        let radius = 0.5 * (w * w + h * h + (hi - lo) * (hi - lo)).sqrt();
        self.distance = radius / (self.fov_y * 0.5).sin() * 0.62;
        self.yaw = 0.6;
        self.pitch = 0.75;
    }

    /// The map view: straight down over the whole document (`width` x `height` texels,
    /// heights lo..hi in world y), north up, from far away through a narrow lens. Near enough
    /// an orthographic map (a texel's size on screen differs by under 1 % across the document
    /// and its relief), and drawn, picked and painted like any view.
    pub fn map_view(&mut self, width: u32, height: u32, lo: f32, hi: f32) {
        let (w, h) = (width as f32, height as f32);
        self.mode = CameraMode::Orbit;
        self.fov_y = MAP_FOV_DEGREES.to_radians();
        self.yaw = 0.0;
        self.pitch = MAP_PITCH;
        self.target = Vec3::new((w - 1.0) * 0.5, (lo + hi) * 0.5, (h - 1.0) * 0.5);
        self.distance = 0.55 * w.max(h) / (self.fov_y * 0.5).tan();
    }

    pub fn view(&self) -> Mat4 {
        let eye = self.eye();
        rh::view::look_to_mat4(eye, self.forward(), Vec3::Y)
    }

    /// Reverse-Z infinite perspective in Vulkan's conventions (depth 0..1, y down).
    pub fn projection(&self, aspect: f32) -> Mat4 {
        rh::proj::vulkan::perspective_infinite_reverse(self.fov_y, aspect, NEAR)
    }

    pub fn view_proj(&self, viewport: [u32; 2]) -> Mat4 {
        let aspect = viewport[0] as f32 / viewport[1].max(1) as f32;
        self.projection(aspect) * self.view()
    }

    /// Rotates an orbit (or turns the fly camera) by mouse motion in pixels.
    pub fn rotate(&mut self, delta: Vec2) {
        self.yaw += delta.x * 0.005;
        self.pitch = (self.pitch + delta.y * 0.005).clamp(-1.5, 1.5);
        if self.mode == CameraMode::Orbit {
            self.pitch = self.pitch.clamp(0.02, 1.5);
        }
    }

    /// Zooms by `factor` (< 1 closer) toward `focus` (the terrain point under the cursor) or the
    /// target: the focus stays under the cursor.
    pub fn zoom_toward(&mut self, focus: Option<Vec3>, factor: f32) {
        match self.mode {
            CameraMode::Orbit => {
                let eye = self.eye();
                let new_distance = (self.distance * factor).max(NEAR * 4.0);
                if let Some(f) = focus {
                    // Move eye and target together toward the focus.
                    let k = 1.0 - new_distance / self.distance;
                    let new_eye = eye + (f - eye) * k;
                    self.target = new_eye + self.forward() * new_distance;
                }
                self.distance = new_distance;
            }
            CameraMode::Fly => {
                let dir = focus.map_or(self.forward(), |f| (f - self.position).normalize_or_zero());
                let step = (1.0 - factor) * 50.0;
                self.position += dir * step;
            }
        }
    }

    /// Moves the fly camera (or pans the orbit target): `local` is (right, up, forward) in world
    /// units.
    pub fn travel(&mut self, local: Vec3) {
        let f = self.forward();
        let right = f.cross(Vec3::Y).normalize_or_zero();
        let delta = right * local.x + Vec3::Y * local.y + f * local.z;
        match self.mode {
            CameraMode::Orbit => self.target += delta,
            CameraMode::Fly => self.position += delta,
        }
    }

    /// Switches mode keeping the eye and direction.
    pub fn set_mode(&mut self, mode: CameraMode) {
        if mode == self.mode {
            return;
        }
        let eye = self.eye();
        self.mode = mode;
        match mode {
            CameraMode::Fly => self.position = eye,
            CameraMode::Orbit => self.target = eye + self.forward() * self.distance,
        }
    }
}

/// The world point at pixel (px, py) (pixel centres at +0.5) of a `viewport` whose depth buffer
/// holds `depth` there; None for the background (reverse-Z: depth 0 is infinitely far).
pub fn unproject(
    view_proj: &Mat4,
    viewport: [u32; 2],
    pixel: [u32; 2],
    depth: f32,
) -> Option<Vec3> {
    if depth <= 0.0 || !depth.is_finite() {
        return None;
    }
    let ndc = ndc_of(viewport, pixel);
    let p = view_proj.inverse() * ndc.extend(depth).extend(1.0);
    (p.w.abs() > 1e-12).then(|| p.truncate() / p.w)
}

/// The eye ray through pixel (px, py): origin and unit direction.
pub fn pixel_ray(view_proj: &Mat4, viewport: [u32; 2], pixel: [u32; 2]) -> (Vec3, Vec3) {
    let inv = view_proj.inverse();
    let ndc = ndc_of(viewport, pixel);
    let near = inv * ndc.extend(1.0).extend(1.0);
    let mid = inv * ndc.extend(0.5).extend(1.0);
    let (a, b) = (near.truncate() / near.w, mid.truncate() / mid.w);
    (a, (b - a).normalize())
}

/// Where world point `p` lands on a `viewport`-sized image, in pixels (the inverse of
/// [`pixel_ray`]); None behind the eye.
pub fn screen_point(view_proj: &Mat4, viewport: [u32; 2], p: Vec3) -> Option<Vec2> {
    let c = *view_proj * p.extend(1.0);
    (c.w > 0.0).then(|| {
        Vec2::new(
            (c.x / c.w * 0.5 + 0.5) * viewport[0] as f32,
            (c.y / c.w * 0.5 + 0.5) * viewport[1] as f32,
        )
    })
}

fn ndc_of(viewport: [u32; 2], pixel: [u32; 2]) -> Vec2 {
    Vec2::new(
        (pixel[0] as f32 + 0.5) / viewport[0] as f32 * 2.0 - 1.0,
        (pixel[1] as f32 + 0.5) / viewport[1] as f32 * 2.0 - 1.0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_at_round_trips_eye_and_target() {
        let c = Camera::look_at(Vec3::new(10.0, 50.0, 200.0), Vec3::new(100.0, 0.0, 100.0));
        assert!((c.eye() - Vec3::new(10.0, 50.0, 200.0)).length() < 1e-3);
    }

    #[test]
    fn a_windows_crop_puts_the_windows_pixels_on_its_target() {
        let c = Camera::default();
        let full = [320, 240];
        let w = ImageWindow {
            full,
            origin: [40, 100],
            size: [120, 50],
        };
        let (whole, part) = (c.view_proj(full), w.crop() * c.view_proj(full));
        // A point seen at pixel p of the whole image is at p - origin in the window.
        for target in [Vec3::new(3.0, -1.0, 2.0), Vec3::new(-10.0, 4.0, 7.0)] {
            let p = screen_point(&whole, full, target).unwrap();
            let q = screen_point(&part, w.size, target).unwrap();
            let want = p - Vec2::new(40.0, 100.0);
            assert!((q - want).length() < 1e-2, "{q} vs {want}");
        }
        assert_eq!(ImageWindow::whole(full).crop(), Mat4::IDENTITY);
    }

    /// The map view shows the whole document from above, north up, at one scale: the
    /// document's edges on screen differ in length by under 1 %, and its highest ground lies
    /// within 1 % of the document's side of where its lowest would.
    #[test]
    fn the_map_view_is_a_top_down_map_at_one_scale() {
        let (w, h, lo, hi) = (1000u32, 600u32, 0.0f32, 250.0f32);
        let mut c = Camera::default();
        c.map_view(w, h, lo, hi);
        let vp = [900, 900];
        let m = c.view_proj(vp);
        let at = |x: f32, y: f32, z: f32| screen_point(&m, vp, Vec3::new(x, y, z)).unwrap();
        let (nw, ne, sw, se) = (
            at(0.0, lo, 0.0),
            at(1000.0, lo, 0.0),
            at(0.0, lo, 600.0),
            at(1000.0, lo, 600.0),
        );
        for p in [nw, ne, sw, se] {
            assert!(
                p.x > 0.0 && p.y > 0.0 && p.x < 900.0 && p.y < 900.0,
                "{p} off screen"
            );
        }
        assert!(
            nw.y < sw.y && nw.x < ne.x,
            "north up, east right: {nw} {ne} {sw}"
        );
        let (north, south) = ((ne - nw).length(), (se - sw).length());
        assert!((north / south - 1.0).abs() < 0.01, "{north} vs {south}");
        let shift = (at(500.0, hi, 300.0) - at(500.0, lo, 300.0)).length();
        assert!(shift < 0.01 * north, "relief shifts the map by {shift} px");
    }

    #[test]
    fn centre_pixel_unprojects_onto_the_view_axis() {
        let c = Camera::look_at(Vec3::new(0.0, 100.0, 0.0), Vec3::new(0.0, 0.0, -100.0));
        let vp = c.view_proj([101, 101]);
        let target = Vec3::new(0.0, 0.0, -100.0);
        let clip = vp * target.extend(1.0);
        let depth = clip.z / clip.w;
        let p = unproject(&vp, [101, 101], [50, 50], depth).unwrap();
        assert!((p - target).length() < 1e-2, "{p}");
        let (o, d) = pixel_ray(&vp, [101, 101], [50, 50]);
        assert!((d - (target - o).normalize()).length() < 1e-4);
        assert!(unproject(&vp, [101, 101], [50, 50], 0.0).is_none());
    }

    #[test]
    fn zoom_toward_keeps_the_focus_in_place_on_screen() {
        let mut c = Camera::look_at(Vec3::new(0.0, 100.0, 100.0), Vec3::ZERO);
        let focus = Vec3::new(20.0, 0.0, 10.0);
        let before = c.view_proj([800, 600]).project_point3(focus);
        c.zoom_toward(Some(focus), 0.5);
        let after = c.view_proj([800, 600]).project_point3(focus);
        assert!((before.truncate() - after.truncate()).length() < 1e-4);
        assert!((c.distance - 0.5 * (100.0f32 * 2.0f32.sqrt())).abs() < 1e-2);
    }
}

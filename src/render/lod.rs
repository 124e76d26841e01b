//! The mesh pieces of the LOD quadtree ([`super::quadtree`]): the tile grid, the index lists of
//! every mesh level and stitching combination, the tile-bounds twin of `tile_bounds.comp`, the
//! projected error and frustum culling.
//!
//! A tile is 65x65 vertices (64 quads) of document texels; mesh level l draws every 2^l-th vertex
//! (l = 0..=6), which is what a quadtree node of level l draws over that tile. A node whose
//! neighbour on a side is one level coarser "stitches" that side: its odd edge vertices snap onto
//! the even ones, so the edge has exactly the coarser node's vertices (no cracks, no
//! T-junctions). One index list exists per (mesh level, stitched sides) pair, all over one shared
//! 65x65 vertex grid.

use super::shared::{TILE_QUADS, TILE_VERTS};
use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec3, Vec4};

/// Levels of detail: vertex steps 1, 2, ..., 64.
pub const LEVELS: usize = 7;
/// Coarsest level.
pub const MAX_LEVEL: u8 = (LEVELS - 1) as u8;
/// Stitched-side combinations (bit 0 north, 1 east, 2 south, 3 west).
pub const STITCHES: usize = 16;

pub const NORTH: u8 = 1;
pub const EAST: u8 = 2;
pub const SOUTH: u8 = 4;
pub const WEST: u8 = 8;

/// What the bounds kernel writes per tile: eight floats.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct TileBounds {
    pub min: f32,
    pub max: f32,
    /// `error[l - 1]`: largest vertical distance of a vertex from the level-l mesh (heights).
    pub error: [f32; LEVELS - 1],
}

impl TileBounds {
    /// Error of level `level` (0 for the full mesh), made monotone in the level.
    pub fn level_error(&self, level: u8) -> f32 {
        match level {
            0 => 0.0,
            l => self.monotone_errors()[l as usize - 1],
        }
    }

    /// `level_error(l)` for l = 1..=6.
    pub fn monotone_errors(&self) -> [f32; LEVELS - 1] {
        let mut m = self.error;
        for l in 1..m.len() {
            m[l] = m[l].max(m[l - 1]);
        }
        m.map(|e| e.max(0.0))
    }
}

/// Tiles over a document of `width` x `height` texels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileGrid {
    pub width: u32,
    pub height: u32,
    pub tiles_x: u32,
    pub tiles_y: u32,
}

impl TileGrid {
    pub fn new(width: u32, height: u32) -> Self {
        let tiles = |n: u32| (n.saturating_sub(1)).div_ceil(TILE_QUADS).max(1);
        Self {
            width,
            height,
            tiles_x: tiles(width),
            tiles_y: tiles(height),
        }
    }

    pub fn count(&self) -> usize {
        self.tiles_x as usize * self.tiles_y as usize
    }

    pub fn index(&self, tx: u32, ty: u32) -> usize {
        ty as usize * self.tiles_x as usize + tx as usize
    }

    /// Document texel of the tile's vertex (0, 0).
    pub fn origin(&self, tx: u32, ty: u32) -> [i32; 2] {
        [(tx * TILE_QUADS) as i32, (ty * TILE_QUADS) as i32]
    }
}

/// Height of the level-`step` mesh at tile vertex (x, y): the cell's triangle split along its
/// (0,0)-(1,1) diagonal, as in [`index_lists`]. `at(x, y)` gives the tile's vertex heights.
fn coarse_height(at: &impl Fn(i32, i32) -> f32, x: i32, y: i32, s: i32) -> f32 {
    let q = TILE_QUADS as i32;
    let cx = (x / s * s).min(q - s);
    let cy = (y / s * s).min(q - s);
    let fx = (x - cx) as f32 / s as f32;
    let fy = (y - cy) as f32 / s as f32;
    let (a, b, c, d) = (
        at(cx, cy),
        at(cx + s, cy),
        at(cx, cy + s),
        at(cx + s, cy + s),
    );
    if fx >= fy {
        a + fx * (b - a) + fy * (d - b)
    } else {
        a + fy * (c - a) + fx * (d - c)
    }
}

/// CPU twin of `tile_bounds.comp`: bounds of tile (tx, ty) of a dense row-major heightfield.
pub fn tile_bounds(heights: &[f32], grid: &TileGrid, tx: u32, ty: u32) -> TileBounds {
    let [ox, oy] = grid.origin(tx, ty);
    let (w, h) = (grid.width as i32, grid.height as i32);
    let n = TILE_VERTS as i32;
    let mut hs = vec![0.0f32; (n * n) as usize];
    for y in 0..n {
        for x in 0..n {
            let gx = (ox + x).min(w - 1);
            let gy = (oy + y).min(h - 1);
            hs[(y * n + x) as usize] = heights[(gy * w + gx) as usize];
        }
    }
    let at = |x: i32, y: i32| hs[(y * n + x) as usize];
    let mut b = TileBounds {
        min: hs.iter().copied().fold(f32::INFINITY, f32::min),
        max: hs.iter().copied().fold(f32::NEG_INFINITY, f32::max),
        error: [0.0; LEVELS - 1],
    };
    for l in 1..LEVELS {
        let s = 1 << l;
        let mut e = 0.0f32;
        for y in 0..n {
            for x in 0..n {
                e = e.max((at(x, y) - coarse_height(&at, x, y, s)).abs());
            }
        }
        b.error[l - 1] = e;
    }
    b
}

/// Where one (level, stitch) index list lies in the shared index buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IndexRange {
    pub first: u32,
    pub count: u32,
}

/// Index lists of every level and stitch combination over the 65x65 grid, concatenated, and
/// where each lies: `ranges[level][stitch]`. Degenerate triangles are left out.
pub fn index_lists() -> (Vec<u16>, [[IndexRange; STITCHES]; LEVELS]) {
    let mut indices = Vec::new();
    let mut ranges = [[IndexRange::default(); STITCHES]; LEVELS];
    for (level, row) in ranges.iter_mut().enumerate() {
        for (stitch, range) in row.iter_mut().enumerate() {
            let first = indices.len() as u32;
            append_tile(&mut indices, level as u8, stitch as u8);
            *range = IndexRange {
                first,
                count: indices.len() as u32 - first,
            };
        }
    }
    (indices, ranges)
}

fn append_tile(out: &mut Vec<u16>, level: u8, stitch: u8) {
    let s = 1u32 << level;
    let n = TILE_QUADS / s;
    // Grid vertex of level-space (i, j), edge vertices snapped for stitched sides.
    let vertex = |i: u32, j: u32| -> u16 {
        let (mut x, mut y) = (i, j);
        let odd = |k: u32| k % 2 == 1;
        if n >= 2 {
            if j == 0 && stitch & NORTH != 0 && odd(i) {
                x -= 1;
            }
            if j == n && stitch & SOUTH != 0 && odd(i) {
                x -= 1;
            }
            if i == 0 && stitch & WEST != 0 && odd(j) {
                y -= 1;
            }
            if i == n && stitch & EAST != 0 && odd(j) {
                y -= 1;
            }
        }
        ((y * s) * TILE_VERTS + x * s) as u16
    };
    for j in 0..n {
        for i in 0..n {
            let a = vertex(i, j);
            let b = vertex(i + 1, j);
            let c = vertex(i, j + 1);
            let d = vertex(i + 1, j + 1);
            for t in [[a, b, d], [a, d, c]] {
                if t[0] != t[1] && t[1] != t[2] && t[0] != t[2] {
                    out.extend_from_slice(&t);
                }
            }
        }
    }
}

/// Triangles of one tile at `level` with no side stitched.
pub fn triangles_at(level: u8) -> u64 {
    let n = u64::from(TILE_QUADS >> level);
    2 * n * n
}

/// What LOD selection needs of the view.
#[derive(Clone, Copy, Debug)]
pub struct LodView {
    pub eye: Vec3,
    /// Viewport height in pixels.
    pub viewport_height: u32,
    /// Vertical field of view (radians).
    pub fov_y: f32,
    /// World y per height unit.
    pub vertical_scale: f32,
    /// Largest screen-space error allowed, in pixels.
    pub pixel_error: f32,
}

impl LodView {
    /// Pixels per world unit at distance 1.
    fn pixels_per_unit(&self) -> f32 {
        self.viewport_height as f32 / (2.0 * (self.fov_y * 0.5).tan())
    }
}

/// Pixels per height unit of error for a node with box (lo, hi): the most that a vertical
/// error anywhere in the box can be seen to move on screen.
///
/// A vertical segment of length δ at a point a distance d from the eye, h of it horizontal and v
/// vertical, subtends δ·sin φ / d = δ·h/d² radians, φ being the angle between the view ray and
/// the vertical: looked at from above, a vertical error moves the surface along the ray, and
/// less of it shows. Over the box, h and v lie in their ranges; h/(h² + v²) is largest at the
/// least v and at h = v clamped into h's range. That is never more than 1/d at the box's nearest
/// point, the bound used until 2026-11-27, and equal to it when the eye is level with the box.
pub fn error_factor(view: &LodView, lo: Vec3, hi: Vec3) -> f32 {
    let e = view.eye;
    let farthest = |c: f32, a: f32, b: f32| (c - a).abs().max((c - b).abs());
    let [h_min, v] = nearest_offsets(e, lo, hi);
    let h_max = farthest(e.x, lo.x, hi.x).hypot(farthest(e.z, lo.z, hi.z));
    let nearest = h_min.hypot(v).max(1e-3);
    let h = v.max(h_min).min(h_max);
    let d2 = h * h + v * v;
    let angular = if d2 > 0.0 { h / d2 } else { f32::INFINITY };
    view.pixels_per_unit() * view.vertical_scale.abs() * angular.min(1.0 / nearest)
}

/// Pixels per world unit across the view at the box's nearest point: what a horizontal length
/// in the box spans on screen at most (foreshortening aside).
pub fn spacing_factor(view: &LodView, lo: Vec3, hi: Vec3) -> f32 {
    let [h, v] = nearest_offsets(view.eye, lo, hi);
    view.pixels_per_unit() / h.hypot(v).max(1e-3)
}

/// The horizontal and vertical distances from `eye` to the nearest point of the box (lo, hi).
/// max/min rather than clamp: a NaN bound (NaN heights) must not panic the selection.
fn nearest_offsets(eye: Vec3, lo: Vec3, hi: Vec3) -> [f32; 2] {
    let away = |c: f32, a: f32, b: f32| (c - c.max(a).min(b)).abs();
    let h = away(eye.x, lo.x, hi.x).hypot(away(eye.z, lo.z, hi.z));
    [h, away(eye.y, lo.y, hi.y)]
}

/// The side and near planes of a reverse-Z view-projection (the far plane is at infinity), each
/// as (normal, distance) with inside >= 0.
pub fn frustum_planes(view_proj: &Mat4) -> [Vec4; 5] {
    let m = view_proj.transpose();
    let (r0, r1, r2, r3) = (m.x_axis, m.y_axis, m.z_axis, m.w_axis);
    [r3 + r0, r3 - r0, r3 + r1, r3 - r1, r3 - r2]
}

/// Whether the box (lo, hi) is at least partly inside `planes`.
pub fn box_visible(planes: &[Vec4; 5], lo: Vec3, hi: Vec3) -> bool {
    planes.iter().all(|p| {
        let far = Vec3::new(
            if p.x >= 0.0 { hi.x } else { lo.x },
            if p.y >= 0.0 { hi.y } else { lo.y },
            if p.z >= 0.0 { hi.z } else { lo.z },
        );
        p.truncate().dot(far) + p.w >= 0.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bumpy(n: u32) -> Vec<f32> {
        (0..n * n)
            .map(|i| {
                let (x, y) = ((i % n) as f32, (i / n) as f32);
                (x * 0.21).sin() * 7.0 + (y * 0.13).cos() * 5.0 + ((x * y) * 0.01).sin()
            })
            .collect()
    }

    #[test]
    fn grid_covers_the_document_with_shared_edges() {
        let g = TileGrid::new(4096, 1025);
        assert_eq!((g.tiles_x, g.tiles_y), (64, 16));
        assert_eq!(g.origin(63, 15), [63 * 64, 15 * 64]);
        // The last tile's last vertex is the document's last texel.
        assert_eq!(63 * 64 + 64, 4096);
        assert_eq!(TileGrid::new(2, 2).count(), 1);
    }

    #[test]
    fn flat_tiles_have_no_error_and_a_plane_has_none_at_any_level() {
        let n = 129;
        let plane: Vec<f32> = (0..n * n)
            .map(|i| 3.0 + 0.5 * (i % n) as f32 - 0.25 * (i / n) as f32)
            .collect();
        let g = TileGrid::new(n, n);
        let b = tile_bounds(&plane, &g, 1, 1);
        assert!(b.error.iter().all(|&e| e < 1e-3), "{b:?}");
        assert_eq!(b.min, 3.0 + 0.5 * 64.0 - 0.25 * 128.0);
    }

    #[test]
    fn errors_grow_with_level_and_a_spike_is_seen_by_every_coarser_level() {
        let n = 65;
        let mut h = vec![0.0f32; (n * n) as usize];
        h[(33 * n + 33) as usize] = 10.0; // odd vertex: absent from every coarser level
        let b = tile_bounds(&h, &TileGrid::new(n, n), 0, 0);
        for l in 1..=MAX_LEVEL {
            assert_eq!(b.level_error(l), 10.0, "level {l}");
        }
        assert_eq!(b.level_error(0), 0.0);
        let bumps = bumpy(65);
        let b = tile_bounds(&bumps, &TileGrid::new(65, 65), 0, 0);
        for l in 1..MAX_LEVEL {
            assert!(b.level_error(l + 1) >= b.level_error(l));
        }
    }

    #[test]
    fn index_lists_cover_the_tile_area_exactly_for_every_stitch() {
        let (indices, ranges) = index_lists();
        for (level, row) in ranges.iter().enumerate() {
            for (stitch, r) in row.iter().enumerate() {
                assert_eq!(r.count % 3, 0);
                let tris = &indices[r.first as usize..(r.first + r.count) as usize];
                // Total unsigned area must equal the tile's: no gaps, no overlaps.
                let pos = |v: u16| {
                    let v = u32::from(v);
                    ((v % TILE_VERTS) as f64, (v / TILE_VERTS) as f64)
                };
                let mut area = 0.0;
                for t in tris.chunks(3) {
                    let (a, b, c) = (pos(t[0]), pos(t[1]), pos(t[2]));
                    let cross = (b.0 - a.0) * (c.1 - a.1) - (b.1 - a.1) * (c.0 - a.0);
                    assert!(cross.abs() > 0.0, "degenerate triangle kept");
                    area += cross.abs() / 2.0;
                }
                assert_eq!(area, 64.0 * 64.0, "level {level} stitch {stitch}");
                if stitch == 0 {
                    assert_eq!(tris.len() as u64 / 3, triangles_at(level as u8));
                }
            }
        }
    }

    #[test]
    fn stitched_edges_use_only_the_coarser_levels_vertices() {
        let (indices, ranges) = index_lists();
        for (level, row) in ranges.iter().enumerate().take(MAX_LEVEL as usize) {
            let step = 2u32 << level; // the neighbour's step
            let r = row[(NORTH | EAST | SOUTH | WEST) as usize];
            for &v in &indices[r.first as usize..(r.first + r.count) as usize] {
                let (x, y) = (u32::from(v) % TILE_VERTS, u32::from(v) / TILE_VERTS);
                if y == 0 || y == TILE_QUADS {
                    assert_eq!(x % step, 0, "level {level}: ({x},{y}) on a stitched edge");
                }
                if x == 0 || x == TILE_QUADS {
                    assert_eq!(y % step, 0, "level {level}: ({x},{y}) on a stitched edge");
                }
            }
        }
    }

    #[test]
    fn frustum_keeps_boxes_in_front_and_drops_those_behind() {
        use glam::camera::rh;
        let proj = rh::proj::vulkan::perspective_infinite_reverse(1.0, 1.5, 0.1);
        let view = rh::view::look_at_mat4(Vec3::ZERO, Vec3::new(0.0, 0.0, -1.0), Vec3::Y);
        let planes = frustum_planes(&(proj * view));
        let unit = Vec3::splat(1.0);
        assert!(box_visible(
            &planes,
            Vec3::new(0.0, 0.0, -10.0) - unit,
            Vec3::new(0.0, 0.0, -10.0) + unit
        ));
        assert!(!box_visible(
            &planes,
            Vec3::new(0.0, 0.0, 10.0) - unit,
            Vec3::new(0.0, 0.0, 10.0) + unit
        ));
        assert!(!box_visible(
            &planes,
            Vec3::new(100.0, 0.0, -10.0) - unit,
            Vec3::new(100.0, 0.0, -10.0) + unit
        ));
    }

    /// The error factor bounds what a small vertical error anywhere in the box subtends (the
    /// angle between the rays to its two ends, sampled over the box), never exceeds the nearest
    /// point's 1/d and meets it when the eye is level with the box.
    #[test]
    fn error_factor_bounds_the_angle_a_vertical_error_subtends() {
        let view = |eye: Vec3| LodView {
            eye,
            viewport_height: 1000,
            fov_y: 1.0,
            vertical_scale: 1.0,
            pixel_error: 2.0,
        };
        let (lo, hi) = (Vec3::new(100.0, 0.0, 40.0), Vec3::new(164.0, 30.0, 104.0));
        let eyes = [
            Vec3::new(130.0, 400.0, 70.0),
            Vec3::new(0.0, 200.0, 0.0),
            Vec3::new(-500.0, 60.0, 90.0),
            Vec3::new(140.0, 35.0, 300.0),
            Vec3::new(20.0, 10.0, 70.0),
            Vec3::new(300.0, -200.0, 90.0),
            Vec3::new(120.0, 15.0, 60.0),
        ];
        let delta = 1e-3f64;
        let mut gains = Vec::new();
        for eye in eyes {
            let v = view(eye);
            let f = error_factor(&v, lo, hi);
            let mut worst = 0.0f32;
            for i in 0..=20 {
                for j in 0..=20 {
                    for k in 0..=10 {
                        let t = Vec3::new(i as f32 / 20.0, k as f32 / 10.0, j as f32 / 20.0);
                        let p = lo + (hi - lo) * t;
                        let a = (p - eye).as_dvec3();
                        let b = a + glam::DVec3::Y * delta;
                        // The angle from its sine, in f64: the rays are nearly parallel.
                        let sine = a.cross(b).length() / (a.length() * b.length());
                        worst = worst.max((sine.asin() / delta) as f32);
                    }
                }
            }
            let worst = worst * v.pixels_per_unit();
            let nearest = (eye - eye.clamp(lo, hi)).length();
            let old = v.pixels_per_unit() / nearest;
            assert!(
                f >= worst * 0.999,
                "eye {eye}: factor {f} under the sampled {worst}"
            );
            assert!(
                f <= old * 1.0001,
                "eye {eye}: factor {f} over the nearest point's {old}"
            );
            gains.push(old / f);
        }
        // Far above the box, the vertical error shows little; level with it, all of it.
        assert!(gains[0] > 4.0, "{gains:?}");
        assert!((gains[4] - 1.0).abs() < 1e-4, "{gains:?}");
    }
}

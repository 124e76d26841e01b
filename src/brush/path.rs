//! Paths — roads and rivers (docs/journal.md, "Paths"): a Catmull-Rom curve through control
//! points that carves, raises or grades a band of the heightfield, as one undo step (journal
//! `{"path": {...}}`).
//!
//! The *plan* is made once on the CPU from the heights before: the curve as short segments, the
//! base height the band follows at each segment end (the centre heights smoothed over the band's
//! width; for `grade`, also limited to the steepest grade allowed), and for each 16x16 tile the
//! segments that can reach it. Each texel then takes its nearest segment and moves toward the
//! cross-section there, on the GPU (`shaders-glsl/brush/path.comp`, [`super::path_gpu`]) or in
//! [`apply_cpu`], its twin; both evaluate [`texel`]'s arithmetic.

use super::shared::{PathPush, PathSegment};
use crate::pages::geometry::Rect;
use crate::rivers::NO_WATER;

/// Most control points in one path.
pub const MAX_POINTS: usize = 4096;
/// Texels between curve samples (the segments' length, about).
pub const STEP: f32 = 2.0;
/// Side of the tiles segments are sorted into.
pub const TILE: u32 = 16;

/// The band's cross-section: how deep (or high) it is across its width, 1 at the centre line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// Level across the width (a box channel, a road bed).
    Flat,
    /// Rounded: sqrt(1 - u^2) at u = distance / half width (a river bed).
    U,
    /// Straight sides: 1 - u (a ditch, a gully).
    V,
}

/// What the band does to the heights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathMode {
    /// Lowers to `depth` below the base (never raises): rivers, cuttings.
    Carve,
    /// Raises to `depth` above the base (never lowers): embankments, dykes.
    Raise,
    /// Sets to the graded base (minus `depth` by the profile), cutting and filling: roads.
    Grade,
}

impl Profile {
    pub const ALL: [Self; 3] = [Self::Flat, Self::U, Self::V];
    pub fn name(self) -> &'static str {
        match self {
            Self::Flat => "flat",
            Self::U => "u",
            Self::V => "v",
        }
    }
    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == s)
    }
}

impl PathMode {
    pub const ALL: [Self; 3] = [Self::Carve, Self::Raise, Self::Grade];
    pub fn name(self) -> &'static str {
        match self {
            Self::Carve => "carve",
            Self::Raise => "raise",
            Self::Grade => "grade",
        }
    }
    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == s)
    }
}

/// A path: where it runs and what it does.
#[derive(Clone, Debug, PartialEq)]
pub struct PathSpec {
    /// Control points in document texels; the curve passes through each.
    pub points: Vec<[f32; 2]>,
    /// Full width of the band at full effect, texels.
    pub width: f32,
    /// Width of the blend beyond each side of the band, texels.
    pub falloff: f32,
    pub profile: Profile,
    pub mode: PathMode,
    /// Height units below (carve, grade) or above (raise) the base at the centre line.
    pub depth: f32,
    /// Grade: the most the base rises or falls per 1000 texels along the curve.
    pub max_grade: f32,
    /// Carve: height units of water standing over the bed's centre line (0: a dry channel),
    /// at most `depth`. See [`water_surface`].
    pub water: f32,
}

impl Default for PathSpec {
    fn default() -> Self {
        Self {
            points: Vec::new(),
            width: 24.0,
            falloff: 16.0,
            profile: Profile::U,
            mode: PathMode::Carve,
            depth: 0.02,
            max_grade: 40.0,
            water: 0.0,
        }
    }
}

impl PathSpec {
    /// Why this path cannot run on a `width` x `height` document, naming the field.
    pub fn validate(&self, width: u32, height: u32) -> Result<(), String> {
        let n = self.points.len();
        if !(2..=MAX_POINTS).contains(&n) {
            return Err(format!(
                "points: a path needs 2 to {MAX_POINTS} control points, got {n}"
            ));
        }
        for (i, p) in self.points.iter().enumerate() {
            let inside = p[0].is_finite()
                && p[1].is_finite()
                && (0.0..=width as f32).contains(&p[0])
                && (0.0..=height as f32).contains(&p[1]);
            if !inside {
                return Err(format!(
                    "points[{i}]: [{}, {}] is outside the {width}x{height} document",
                    p[0], p[1]
                ));
            }
        }
        let check = |name: &str, v: f32, lo: f32, hi: f32| {
            if v.is_finite() && (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(format!("{name} must be between {lo} and {hi}, got {v}"))
            }
        };
        check("width", self.width, 1.0, 8192.0)?;
        check("falloff", self.falloff, 0.0, 8192.0)?;
        check("depth", self.depth, 0.0, 1000.0)?;
        check("max_grade", self.max_grade, 0.0, 1000.0)?;
        check("water", self.water, 0.0, self.depth)?;
        if self.water > 0.0 && self.mode != PathMode::Carve {
            return Err(format!(
                "water: only a carved channel holds water (mode {}, not carve)",
                self.mode.name()
            ));
        }
        Ok(())
    }

    /// How far from the centre line the path changes heights.
    pub fn reach(&self) -> f32 {
        0.5 * self.width + self.falloff
    }
}

/// Uniform Catmull-Rom through `points` (the ends doubled), about [`STEP`] apart in their first
/// two coordinates: the points of the curve, the control points among them.
pub fn catmull_rom<const N: usize>(points: &[[f32; N]]) -> Vec<[f32; N]> {
    let Some(&last) = points.last() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for i in 0..points.len() - 1 {
        let p0 = points[i.saturating_sub(1)];
        let (p1, p2) = (points[i], points[i + 1]);
        let p3 = points[(i + 2).min(points.len() - 1)];
        let len = (p2[0] - p1[0]).hypot(p2[1] - p1[1]);
        let n = (len / STEP).ceil().max(1.0) as usize;
        for j in 0..n {
            let t = j as f32 / n as f32;
            let (t2, t3) = (t * t, t * t * t);
            out.push(std::array::from_fn(|k| {
                0.5 * (2.0 * p1[k]
                    + (p2[k] - p0[k]) * t
                    + (2.0 * p0[k] - 5.0 * p1[k] + 4.0 * p2[k] - p3[k]) * t2
                    + (3.0 * p1[k] - p0[k] - 3.0 * p2[k] + p3[k]) * t3)
            }));
        }
    }
    out.push(last);
    out
}

/// Arc length from the first point to each.
fn arc_lengths(curve: &[[f32; 2]]) -> Vec<f32> {
    let mut s = 0.0;
    let mut out = Vec::with_capacity(curve.len());
    for (i, p) in curve.iter().enumerate() {
        if i > 0 {
            let q = curve[i - 1];
            s += (p[0] - q[0]).hypot(p[1] - q[1]);
        }
        out.push(s);
    }
    out
}

/// The mean of `h` over the points within `window` arc length of each.
fn smoothed(h: &[f32], s: &[f32], window: f32) -> Vec<f32> {
    let (mut lo, mut hi, mut sum) = (0usize, 0usize, 0.0f64);
    (0..h.len())
        .map(|i| {
            while hi < h.len() && s[hi] <= s[i] + window {
                sum += f64::from(h[hi]);
                hi += 1;
            }
            while s[lo] < s[i] - window {
                sum -= f64::from(h[lo]);
                lo += 1;
            }
            (sum / (hi - lo) as f64) as f32
        })
        .collect()
}

/// The grade of `f` along arc lengths `s`: the mean of the highest profile below `f` and the
/// lowest above it that rise or fall at most `m` per texel (each exact by a forward and a
/// backward pass). The mean rises or falls at most `m` too, and of all such profiles it strays
/// least from `f` at its worst point.
pub fn graded(f: &[f32], s: &[f32], m: f32) -> Vec<f32> {
    let n = f.len();
    let (mut lo, mut hi) = (f.to_vec(), f.to_vec());
    for i in 1..n {
        let d = m * (s[i] - s[i - 1]);
        lo[i] = lo[i].min(lo[i - 1] + d);
        hi[i] = hi[i].max(hi[i - 1] - d);
    }
    for i in (0..n.saturating_sub(1)).rev() {
        let d = m * (s[i + 1] - s[i]);
        lo[i] = lo[i].min(lo[i + 1] + d);
        hi[i] = hi[i].max(hi[i + 1] - d);
    }
    lo.iter().zip(&hi).map(|(a, b)| 0.5 * (a + b)).collect()
}

/// Width and height of `rect`.
fn size_of(rect: Rect) -> [u32; 2] {
    [rect.width().max(0) as u32, rect.height().max(0) as u32]
}

/// Bilinear sample of `values` (row-major over `rect`, a texel at its integer position) at
/// document point `p`, clamped to the rect.
fn sample(values: &[f32], rect: Rect, p: [f32; 2]) -> f32 {
    let w = rect.width() as usize;
    let at = |x: i32, y: i32| {
        let x = (x - rect.x0).clamp(0, rect.width() - 1) as usize;
        let y = (y - rect.y0).clamp(0, rect.height() - 1) as usize;
        values[y * w + x]
    };
    let (fx, fy) = (p[0].floor(), p[1].floor());
    let (tx, ty) = (p[0] - fx, p[1] - fy);
    let (x, y) = (fx as i32, fy as i32);
    let top = at(x, y) + (at(x + 1, y) - at(x, y)) * tx;
    let bottom = at(x, y + 1) + (at(x + 1, y + 1) - at(x, y + 1)) * tx;
    top + (bottom - top) * ty
}

/// The texels a path on a `width` x `height` document can change: its curve's box grown by its
/// reach, inside the document (empty if none).
pub fn rect_of(spec: &PathSpec, width: u32, height: u32) -> Rect {
    let curve = catmull_rom(&spec.points);
    let r = spec.reach() + 1.0;
    let (mut x0, mut y0, mut x1, mut y1) = (f32::MAX, f32::MAX, f32::MIN, f32::MIN);
    for p in &curve {
        x0 = x0.min(p[0]);
        y0 = y0.min(p[1]);
        x1 = x1.max(p[0]);
        y1 = y1.max(p[1]);
    }
    Rect {
        x0: ((x0 - r).floor() as i32).clamp(0, width as i32),
        y0: ((y0 - r).floor() as i32).clamp(0, height as i32),
        x1: ((x1 + r).ceil() as i32 + 1).clamp(0, width as i32),
        y1: ((y1 + r).ceil() as i32 + 1).clamp(0, height as i32),
    }
}

/// Everything a texel needs: the segments with their base heights, the push constants, and per
/// tile of the rect the segments that can reach it.
#[derive(Clone, Debug, PartialEq)]
pub struct PathPlan {
    pub rect: Rect,
    pub push: PathPush,
    pub segments: Vec<PathSegment>,
    /// Tile t's segments are `tile_segments[tile_start[t]..tile_start[t + 1]]`, in order.
    pub tile_start: Vec<u32>,
    pub tile_segments: Vec<u32>,
}

/// Tile ranges (x, y) of a rect of `tiles` whose lists each segment of `curve` joins: those its
/// box grown by `reach` overlaps (tile t covers texels [t * TILE, t * TILE + TILE - 1]). A
/// segment missing a tile is farther than the reach from all its texels.
type Span = (std::ops::RangeInclusive<u32>, std::ops::RangeInclusive<u32>);
fn tile_spans(curve: &[[f32; 2]], rect: Rect, tiles: [u32; 2], reach: f32) -> Vec<Option<Span>> {
    let span = |lo: f32, hi: f32, origin: i32, count: u32| {
        let first = ((lo - reach - origin as f32) / TILE as f32).floor();
        let last = ((hi + reach - origin as f32) / TILE as f32).floor();
        let clamp = |v: f32| v.clamp(0.0, count as f32 - 1.0) as u32;
        (last >= 0.0 && first <= count as f32 - 1.0).then(|| clamp(first)..=clamp(last))
    };
    curve
        .windows(2)
        .map(|w| {
            let (a, b) = (w[0], w[1]);
            let xs = span(a[0].min(b[0]), a[0].max(b[0]), rect.x0, tiles[0])?;
            let ys = span(a[1].min(b[1]), a[1].max(b[1]), rect.y0, tiles[1])?;
            Some((xs, ys))
        })
        .collect()
}

fn tiles_of(rect: Rect) -> [u32; 2] {
    let [w, h] = size_of(rect);
    [w.div_ceil(TILE).max(1), h.div_ceil(TILE).max(1)]
}

/// How many entries the tile lists of `spec` over `rect` hold (checked against what a GPU
/// binds before any work).
pub fn tile_list_len(spec: &PathSpec, rect: Rect) -> u64 {
    let curve = catmull_rom(&spec.points);
    tile_spans(&curve, rect, tiles_of(rect), spec.reach())
        .iter()
        .flatten()
        .map(|(xs, ys)| xs.clone().count() as u64 * ys.clone().count() as u64)
        .sum()
}

/// The plan of `spec` over `rect` (from [`rect_of`]), whose heights before are `values`.
pub fn plan(spec: &PathSpec, rect: Rect, values: &[f32]) -> PathPlan {
    let curve = catmull_rom(&spec.points);
    let s = arc_lengths(&curve);
    let centre: Vec<f32> = curve.iter().map(|&p| sample(values, rect, p)).collect();
    let smooth = smoothed(&centre, &s, spec.width.max(STEP));
    let base = match spec.mode {
        PathMode::Grade => graded(&smooth, &s, spec.max_grade / 1000.0),
        PathMode::Carve | PathMode::Raise => smooth,
    };
    let segments: Vec<PathSegment> = (0..curve.len().saturating_sub(1))
        .map(|i| PathSegment {
            a: curve[i],
            b: curve[i + 1],
            base_a: base[i],
            base_b: base[i + 1],
            _pad: [0.0; 2],
        })
        .collect();
    let [w, h] = size_of(rect);
    let tiles = tiles_of(rect);
    let spans = tile_spans(&curve, rect, tiles, spec.reach());
    let tile_count = (tiles[0] * tiles[1]) as usize;
    let mut counts = vec![0u32; tile_count + 1];
    for (xs, ys) in spans.iter().flatten() {
        for ty in ys.clone() {
            for tx in xs.clone() {
                counts[(ty * tiles[0] + tx) as usize + 1] += 1;
            }
        }
    }
    let mut tile_start = counts;
    for t in 1..tile_start.len() {
        tile_start[t] += tile_start[t - 1];
    }
    let mut fill = tile_start.clone();
    let mut tile_segments = vec![0u32; tile_start[tile_count] as usize];
    for (i, span) in spans.iter().enumerate() {
        if let Some((xs, ys)) = span {
            for ty in ys.clone() {
                for tx in xs.clone() {
                    let t = (ty * tiles[0] + tx) as usize;
                    tile_segments[fill[t] as usize] = i as u32;
                    fill[t] += 1;
                }
            }
        }
    }
    let sign = match spec.mode {
        PathMode::Raise => 1.0,
        PathMode::Carve | PathMode::Grade => -1.0,
    };
    let push = PathPush {
        rect_origin: [rect.x0, rect.y0],
        rect_size: [w, h],
        tiles_x: tiles[0],
        half_width: 0.5 * spec.width,
        falloff: spec.falloff,
        signed_depth: sign * spec.depth,
        mode: spec.mode as u32,
        profile: spec.profile as u32,
        _pad: [0; 2],
    };
    PathPlan {
        rect,
        push,
        segments,
        tile_start,
        tile_segments,
    }
}

/// The segment of `plan` nearest to document point `p` among those listed for tile `t`: its
/// squared distance (infinite where the list is empty), index and position along it (0..1).
fn nearest(plan: &PathPlan, t: u32, p: [f32; 2]) -> (f32, usize, f32) {
    let list = &plan.tile_segments
        [plan.tile_start[t as usize] as usize..plan.tile_start[t as usize + 1] as usize];
    let mut best = (f32::INFINITY, 0, 0.0);
    for &i in list {
        let g = &plan.segments[i as usize];
        let ab = [g.b[0] - g.a[0], g.b[1] - g.a[1]];
        let ap = [p[0] - g.a[0], p[1] - g.a[1]];
        let l2 = ab[0] * ab[0] + ab[1] * ab[1];
        let u = if l2 > 0.0 {
            ((ap[0] * ab[0] + ap[1] * ab[1]) / l2).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let d = [ap[0] - ab[0] * u, ap[1] - ab[1] * u];
        let d2 = d[0] * d[0] + d[1] * d[1];
        if d2 < best.0 {
            best = (d2, i as usize, u);
        }
    }
    best
}

/// Document point and tile of texel (x, y) of the plan's rect (local).
fn point_and_tile(plan: &PathPlan, x: u32, y: u32) -> ([f32; 2], u32) {
    let pc = &plan.push;
    let p = [
        (pc.rect_origin[0] + x as i32) as f32,
        (pc.rect_origin[1] + y as i32) as f32,
    ];
    (p, (y / TILE) * pc.tiles_x + x / TILE)
}

/// Texel (x, y) of the rect (local), height `h`, under `plan`: the twin of path.comp's `main`.
pub fn texel(plan: &PathPlan, x: u32, y: u32, h: f32) -> f32 {
    let pc = &plan.push;
    let (p, t) = point_and_tile(plan, x, y);
    let (best, i, u) = nearest(plan, t, p);
    let base = if best.is_finite() {
        let g = &plan.segments[i];
        g.base_a + (g.base_b - g.base_a) * u
    } else {
        0.0
    };
    let d = best.sqrt();
    let half = pc.half_width;
    if d.is_nan() || d >= half + pc.falloff {
        return h;
    }
    // Beyond the band the cross-section keeps its edge value, fading out over the falloff.
    let u = (d / half).min(1.0);
    let profile = if pc.profile == Profile::U as u32 {
        ((1.0 - u) * (1.0 + u)).sqrt()
    } else if pc.profile == Profile::V as u32 {
        1.0 - u
    } else {
        1.0
    };
    let target = base + pc.signed_depth * profile;
    let w = if d <= half {
        1.0
    } else {
        let t = (d - half) / pc.falloff;
        1.0 - t * t * (3.0 - 2.0 * t)
    };
    let goal = if pc.mode == PathMode::Carve as u32 {
        h.min(target)
    } else if pc.mode == PathMode::Raise as u32 {
        h.max(target)
    } else {
        target
    };
    h + (goal - h) * w
}

/// The water surface of a carved path holding `spec.water`, at each point of its curve: the
/// bed's centre (the base less `depth`) plus the water, so the water stands `water` deep over
/// the centre line (it follows the bed, up and down as the smoothed base goes); but never above
/// the ground before the carve at either end of the cross-section there (the reach, where the
/// carve stops), so the water stays in the channel rather than spilling over a low bank; and
/// none ([`NO_WATER`]) where that leaves less than half the water asked.
fn surface_along(spec: &PathSpec, plan: &PathPlan, before: &[f32]) -> Vec<f32> {
    let Some(last) = plan.segments.last() else {
        return Vec::new();
    };
    let points: Vec<[f32; 2]> = plan
        .segments
        .iter()
        .map(|g| g.a)
        .chain(std::iter::once(last.b))
        .collect();
    let bases = plan
        .segments
        .iter()
        .map(|g| g.base_a)
        .chain(std::iter::once(last.base_b));
    let reach = spec.reach();
    let n = points.len();
    bases
        .enumerate()
        .map(|(i, base)| {
            let (p, q) = (points[i.saturating_sub(1)], points[(i + 1).min(n - 1)]);
            let (tx, ty) = (q[0] - p[0], q[1] - p[1]);
            let len = tx.hypot(ty).max(1e-6);
            let normal = [-ty / len * reach, tx / len * reach];
            let c = points[i];
            let bank = |sign: f32| {
                sample(
                    before,
                    plan.rect,
                    [c[0] + sign * normal[0], c[1] + sign * normal[1]],
                )
            };
            let bed = base - spec.depth;
            let surface = (bed + spec.water).min(bank(1.0)).min(bank(-1.0));
            // A channel that holds less than half the water asked (across a slope, where the
            // lower side is no bank) holds none: not a film over the bed's lowest texels.
            if surface < bed + 0.5 * spec.water {
                NO_WATER
            } else {
                surface
            }
        })
        .collect()
}

/// The water a carved path holding `spec.water` leaves over the heights `before` it (row-major
/// over `plan.rect`): within the path's reach, the surface at the nearest point of its curve
/// ([`surface_along`]); [`NO_WATER`] beyond it, and everywhere for a dry path. Where the ground
/// (after the carve) lies below the surface, the texel is under water.
pub fn water_surface(spec: &PathSpec, plan: &PathPlan, before: &[f32]) -> Vec<f32> {
    let [w, h] = size_of(plan.rect);
    let mut out = vec![NO_WATER; (w * h) as usize];
    if spec.water <= 0.0 || spec.mode != PathMode::Carve {
        return out;
    }
    let along = surface_along(spec, plan, before);
    let reach = plan.push.half_width + plan.push.falloff;
    for (i, v) in out.iter_mut().enumerate() {
        let (p, t) = point_and_tile(plan, i as u32 % w, i as u32 / w);
        let (best, s, u) = nearest(plan, t, p);
        // Next to a point that holds none there is none: blending with NO_WATER could round
        // to a surface (at u = 1 it gives 0 exactly).
        if best.sqrt() < reach && along[s] != NO_WATER && along[s + 1] != NO_WATER {
            *v = along[s] + (along[s + 1] - along[s]) * u;
        }
    }
    out
}

/// The CPU twin of the path kernel: every texel of `values` (row-major over `plan.rect`).
pub fn apply_cpu(plan: &PathPlan, values: &mut [f32]) {
    let w = plan.push.rect_size[0];
    for (i, h) in values.iter_mut().enumerate() {
        *h = texel(plan, i as u32 % w, i as u32 / w, *h);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_curve_passes_through_every_control_point_about_a_step_apart() {
        let pts = [[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [30.0, 14.0]];
        let c = catmull_rom(&pts);
        for p in pts {
            assert!(c.contains(&p), "{p:?} not on the curve");
        }
        for w in c.windows(2) {
            let d = (w[1][0] - w[0][0]).hypot(w[1][1] - w[0][1]);
            assert!(d > 0.5 && d < 2.0 * STEP, "{d}");
        }
        // Straight control points give a straight line.
        let line = catmull_rom(&[[0.0, 5.0], [8.0, 5.0], [20.0, 5.0]]);
        assert!(line.iter().all(|p| (p[1] - 5.0).abs() < 1e-5));
    }

    #[test]
    fn the_grade_keeps_to_the_steepest_allowed_and_follows_gentle_ground() {
        let s: Vec<f32> = (0..200).map(|i| i as f32 * 2.0).collect();
        // A cliff in the middle: 0 then 1.
        let f: Vec<f32> = (0..200).map(|i| if i < 100 { 0.0 } else { 1.0 }).collect();
        let m = 0.002;
        let g = graded(&f, &s, m);
        for i in 1..g.len() {
            assert!((g[i] - g[i - 1]).abs() <= m * 2.0 + 1e-6, "at {i}");
        }
        // Symmetric about the cliff, and never farther from the ground than half the cliff (the
        // least any grade this gentle can be).
        assert!((g[0] + g[199] - 1.0).abs() < 1e-4, "{} {}", g[0], g[199]);
        assert!(g.iter().zip(&f).all(|(a, b)| (a - b).abs() <= 0.5 + 1e-6));
        assert!(g[0] > 0.0 && g[199] < 1.0);
        // Ground gentler than the limit is left as it is.
        let gentle: Vec<f32> = s.iter().map(|x| 0.001 * x).collect();
        assert_eq!(graded(&gentle, &s, m), gentle);
    }

    #[test]
    fn bad_paths_are_named() {
        let mut p = PathSpec {
            points: vec![[1.0, 1.0]],
            ..Default::default()
        };
        assert!(p.validate(64, 64).unwrap_err().starts_with("points:"));
        p.points.push([70.0, 3.0]);
        assert!(p.validate(64, 64).unwrap_err().starts_with("points[1]:"));
        p.points[1] = [30.0, 3.0];
        assert_eq!(p.validate(64, 64), Ok(()));
        p.width = 0.0;
        assert!(p.validate(64, 64).unwrap_err().starts_with("width"));
        p.width = 8.0;
        p.depth = f32::NAN;
        assert!(p.validate(64, 64).unwrap_err().starts_with("depth"));
    }

    /// The tile lists leave out only segments that cannot matter: the same heights as with every
    /// segment listed for every tile, bit for bit, for a winding path over uneven ground.
    #[test]
    fn the_tile_lists_give_what_every_segment_everywhere_gives() {
        let spec = PathSpec {
            points: vec![
                [3.0, 60.0],
                [50.0, 5.0],
                [90.0, 70.0],
                [40.0, 95.0],
                [120.0, 30.0],
            ],
            width: 9.0,
            falloff: 7.0,
            profile: Profile::U,
            mode: PathMode::Grade,
            depth: 0.05,
            max_grade: 3.0,
            water: 0.0,
        };
        let rect = rect_of(&spec, 128, 100);
        let n = (rect.width() * rect.height()) as usize;
        let ground: Vec<f32> = (0..n)
            .map(|i| ((i * 7919) % 1000) as f32 / 1000.0)
            .collect();
        let culled = plan(&spec, rect, &ground);
        let tiles = culled.tile_start.len() - 1;
        let all: Vec<u32> = (0..culled.segments.len() as u32).collect();
        let everything = PathPlan {
            tile_start: (0..=tiles).map(|t| (t * all.len()) as u32).collect(),
            tile_segments: (0..tiles).flat_map(|_| all.iter().copied()).collect(),
            ..culled.clone()
        };
        assert!(culled.tile_segments.len() * 4 < everything.tile_segments.len());
        assert_eq!(
            tile_list_len(&spec, rect),
            culled.tile_segments.len() as u64
        );
        let (mut a, mut b) = (ground.clone(), ground.clone());
        apply_cpu(&culled, &mut a);
        apply_cpu(&everything, &mut b);
        assert!(a == b, "culling changed a height");
        assert!(a != ground);
    }

    /// A straight carve with a flat profile on flat ground: exactly `depth` down within the half
    /// width, untouched beyond the reach, in between in the falloff.
    #[test]
    fn a_flat_carve_on_flat_ground_cuts_a_box_channel() {
        let spec = PathSpec {
            points: vec![[4.0, 32.0], [60.0, 32.0]],
            width: 10.0,
            falloff: 6.0,
            profile: Profile::Flat,
            mode: PathMode::Carve,
            depth: 0.1,
            max_grade: 40.0,
            water: 0.0,
        };
        let rect = rect_of(&spec, 64, 64);
        let mut v = vec![0.5; (rect.width() * rect.height()) as usize];
        let w = rect.width();
        let plan = plan(&spec, rect, &v);
        apply_cpu(&plan, &mut v);
        let at = |x: i32, y: i32| v[((y - rect.y0) * w + (x - rect.x0)) as usize];
        for x in 10..54 {
            for dy in -4..=4 {
                assert!((at(x, 32 + dy) - 0.4).abs() < 1e-6, "({x}, {dy})");
            }
            assert_eq!(at(x, 32 + 11), 0.5);
            let mid = at(x, 32 + 8);
            assert!(mid > 0.4 && mid < 0.5, "{mid}");
        }
    }

    /// Water in a channel: on flat ground the surface stands `water` over the bed within the
    /// reach and there is none beyond; across a steep slope (no bank on the lower side) none.
    #[test]
    fn a_channel_holds_its_water_on_flat_ground_and_none_across_a_slope() {
        let spec = PathSpec {
            points: vec![[4.0, 32.0], [60.0, 32.0]],
            width: 10.0,
            falloff: 6.0,
            profile: Profile::Flat,
            water: 0.04,
            ..PathSpec::default()
        };
        let spec = PathSpec { depth: 0.1, ..spec };
        let rect = rect_of(&spec, 64, 64);
        let w = rect.width();
        let flat = vec![0.5; (rect.width() * rect.height()) as usize];
        let p = plan(&spec, rect, &flat);
        let water = water_surface(&spec, &p, &flat);
        let at = |v: &[f32], x: i32, y: i32| v[((y - rect.y0) * w + (x - rect.x0)) as usize];
        for x in 10..54 {
            for dy in -10..=10 {
                assert!((at(&water, x, 32 + dy) - 0.44).abs() < 1e-6, "({x}, {dy})");
            }
            assert_eq!(at(&water, x, 32 + 12), NO_WATER);
        }
        // The ground falls 0.0064 a texel across the path: the lower bank (11 texels off) is
        // 0.0296 over the bed, under the 0.04 asked: the water stands at the bank, and no
        // higher than it anywhere.
        let slope = |fall: f32| -> Vec<f32> {
            (0..flat.len())
                .map(|i| 0.5 - fall * (i as i32 / w + rect.y0) as f32)
                .collect()
        };
        let capped = slope(0.0064);
        let p = plan(&spec, rect, &capped);
        let water = water_surface(&spec, &p, &capped);
        let bank = 0.5 - 0.0064 * 43.0;
        for x in 10..54 {
            let s = at(&water, x, 32);
            assert!((s - bank).abs() < 1e-5, "({x}, 32): {s} vs the bank {bank}");
        }
        assert!(water.iter().all(|&s| s <= bank + 1e-5));
        // Falling 0.01 a texel, the lower bank is 0.01 under the bed: no water at all.
        let slope: Vec<f32> = (0..flat.len())
            .map(|i| 0.5 - 0.01 * (i as i32 / w) as f32)
            .collect();
        let p = plan(&spec, rect, &slope);
        assert!(water_surface(&spec, &p, &slope)
            .iter()
            .all(|&s| s == NO_WATER));
        // A dry path holds none.
        let dry = PathSpec { water: 0.0, ..spec };
        assert!(water_surface(&dry, &p, &slope)
            .iter()
            .all(|&s| s == NO_WATER));
    }
}

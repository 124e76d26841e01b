//! Sun shadows and ambient occlusion from the heights, in a derived field of the page store
//! ([`FIELD`], r32f, no undo) that the renderer reads per vertex: a page's texels are computed
//! on the GPU (`render/lighting.comp`) from the height pages around it and the height's coarse
//! level; [`light_texel`] is the CPU twin. The world heights a job's taps reach are first
//! gathered from the nine pages into one image (`render/light_gather.comp`, [`gather_rect`]),
//! so that a tap reads one image instead of choosing among nine.
//!
//! **Why a field, not shadow maps.** The shadows come from the heights themselves: per texel a
//! march toward the sun finds the highest horizon, at full resolution over the page and its
//! neighbours (128 texels at least) and over the coarse level's 64² block means (interpolated
//! between block centres) beyond, up to [`MAX_DIST`] texels. So far terrain casts onto near
//! terrain whatever is drawn at which level of detail, the shadow of a mountain does not depend
//! on where the camera is, and an edit or a change of sun refreshes only the pages whose march
//! or horizons can reach what changed (see [`Lighting::update`]). A shadow map would re-render
//! the terrain from the sun every frame, at a resolution spread over the view.
//!
//! **Per texel** (world heights: height x vertical scale, a texel apart):
//! * sun visibility: with `t` the highest tangent of the horizon toward the sun, the sun sets
//!   linearly between the tangents of `elevation - SPREAD` (visibility 1) and `elevation +
//!   SPREAD` (0): a soft penumbra. The march first takes, at every distance `d` below 128 (what
//!   the page's neighbours hold at least: every peak nearby is hit), the texel offset nearest
//!   the sun's direction x `d` ([`fine_offset`]: the same offsets for every texel, made once
//!   per workgroup on the GPU); then steps of a sixteenth of the distance so far from the
//!   exact direction (58 taps from 128 to 4096), and stops at the document's edge or once even
//!   the document's highest point could not rise above the penumbra's lower edge.
//! * ambient occlusion: 1 - the mean over eight directions of the sine of the horizon's
//!   elevation within [`AO_RADIUS`] texels (taps at 1, 2, 3, 4, 6, 9, 13, 19, 28, 42).
//! * both quantized to 1/1023 and packed as `sun + 1024 · ao` (exact in an f32; [`pack`]).
//!
//! **The far level.** The field's coarse level holds, over pages not lit at full resolution,
//! the lighting of the surface coarse nodes draw (block corners, bilinear), by the same model
//! from the height's coarse level alone (`render/lighting_far.comp`, twin [`far_texel`]); over
//! lit pages, their corner texels. [`Lighting::follow_view`] lights at full resolution only the
//! pages the renderer draws at page level, so a large world is lit as far as it is drawn fine.

use crate::gpu::{
    shaders, vk, Access, BindingKind, ComputeKernel, DescriptorSet, Gpu, Image, ImageDesc,
    Recorder, Resource, Submitter,
};
use crate::pages::geometry::{DocumentDesc, HeightFormat, PageId, Rect};
use crate::pages::{coarse, field, Field, PageError, PageStore, HEIGHT};
use crate::shared_constants as k;
use bytemuck::{Pod, Zeroable};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

type Result<T, E = PageError> = std::result::Result<T, E>;

/// The lighting field's name in the page store.
pub const FIELD: &str = "lighting";
/// Longest shadow followed, texels.
pub const MAX_DIST: i32 = k::LIGHT_MAX_DIST;
/// Reach of the occlusion horizons, texels.
pub const AO_RADIUS: i32 = k::AO_RADIUS;
/// Half the angle over which the sun sets behind a horizon (the penumbra), degrees.
pub const SPREAD_DEG: f32 = 2.5;
const LEVELS: u32 = k::LIGHT_LEVELS;
/// A texel in full sun with nothing around it: the field's flat value.
pub const LIT: f32 = (LEVELS + 1024 * LEVELS) as f32;
/// Pages lit per submission (each binds its own set).
const PAGES_PER_SUBMIT: usize = 16;
/// Most bytes of lit pages kept beyond those the renderer draws at page level while following
/// the view ([`Lighting::follow_view`]), as GPU pages (a front and a back image each).
pub const KEPT_BEYOND_VIEW: u64 = 256 << 20;
/// Workgroup side of `render/lighting_far.comp`.
const FAR_GROUP: u32 = 8;
/// GPU time per frame the editor and the frame loops give the strips far from an edit (and a
/// new sun's relighting) unless told otherwise, ms: the texels near an edit are lit at once.
pub const DEFAULT_BUDGET_MS: f64 = 0.6;

/// Where the sun is: azimuth clockwise from north (north: decreasing rows, east: increasing
/// columns) and elevation above the horizon, degrees.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sun {
    pub azimuth: f32,
    pub elevation: f32,
}

impl Default for Sun {
    /// Low in the south-west: long shadows toward the north-east that read well from the
    /// default camera.
    fn default() -> Self {
        Self {
            azimuth: 225.0,
            elevation: 30.0,
        }
    }
}

impl Sun {
    /// Towards the sun in texel space (column, row), unit length.
    pub fn dir(&self) -> [f32; 2] {
        let a = self.azimuth.to_radians();
        [a.sin(), -a.cos()]
    }

    /// Towards the sun in world space (x: column, y: up, z: row), unit length.
    pub fn world(&self) -> [f32; 3] {
        let [x, z] = self.dir();
        let e = self.elevation.to_radians();
        [x * e.cos(), e.sin(), z * e.cos()]
    }
}

impl std::str::FromStr for Sun {
    type Err = String;

    /// `AZ,EL` in degrees; the elevation between 1 and 90.
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let parts: Vec<&str> = s.split(',').collect();
        let [az, el] = parts[..] else {
            return Err(format!("expected AZIMUTH,ELEVATION in degrees, got {s:?}"));
        };
        let num = |v: &str, what: &str| {
            v.trim()
                .parse::<f32>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("{what} {v:?} is not a number"))
        };
        let (azimuth, elevation) = (num(az, "azimuth")?, num(el, "elevation")?);
        if !(1.0..=90.0).contains(&elevation) {
            return Err(format!(
                "elevation must be between 1 and 90 degrees, got {elevation}"
            ));
        }
        Ok(Self {
            azimuth: azimuth.rem_euclid(360.0),
            elevation,
        })
    }
}

/// What the lighting depends on besides the heights.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LightSettings {
    pub sun: Sun,
    /// World y per height unit that shadows and occlusion are cast with.
    pub vertical_scale: f32,
}

impl LightSettings {
    /// The lighting of a `desc` document drawn at `drawn_scale`: shadows of the true-scale
    /// ground wherever the height unit is known (an exaggerated view keeps the sun's real
    /// shadows), of the drawn relief where it is not (no true scale to cast them with).
    pub fn for_view(
        sun: Sun,
        desc: &crate::pages::geometry::DocumentDesc,
        drawn_scale: f32,
    ) -> Self {
        let vertical_scale = match desc.units.height_unit {
            Some(_) => desc.vertical_scale(),
            None => drawn_scale,
        };
        Self {
            sun,
            vertical_scale,
        }
    }
}

/// The far level's coarse texels whose lighting a change of the heights in `changed` (document
/// texels) can reach: the corners in it move the surface a block around them; a texel's march
/// reads that surface up to [`MAX_DIST`] toward the sun, its horizons [`AO_RADIUS`] around.
pub fn far_region(desc: &DocumentDesc, sun: &Sun, changed: Rect) -> Rect {
    let f = k::COARSE_FACTOR;
    let surface = Rect::new(
        changed.x0 - f,
        changed.y0 - f,
        changed.x1 + f,
        changed.y1 + f,
    );
    let [dx, dy] = sun.dir();
    let reach = MAX_DIST as f32;
    let (bx, by) = ((-dx * reach).round() as i32, (-dy * reach).round() as i32);
    let swept = surface.union(&surface.translate(bx, by));
    let m = AO_RADIUS + 1;
    let texels = Rect::new(swept.x0 - m, swept.y0 - m, swept.x1 + m, swept.y1 + m);
    let [cw, ch] = coarse::size_of(desc);
    Rect::new(
        texels.x0.div_euclid(f),
        texels.y0.div_euclid(f),
        texels.x1.div_euclid(f) + 1,
        texels.y1.div_euclid(f) + 1,
    )
    .intersect(&Rect::new(0, 0, cw as i32, ch as i32))
}

/// Push constants of `render/lighting.comp` and `render/light_gather.comp`
/// (`lighting_shared.glsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct LightPush {
    /// First texel of the page.
    pub origin: [i32; 2],
    /// Page-local first texel of the region lit, and its texels (inside the page).
    pub first: [i32; 2],
    pub size: [i32; 2],
    pub doc: [i32; 2],
    pub coarse_size: [i32; 2],
    pub sun_dir: [f32; 2],
    pub side: i32,
    pub present: u32,
    pub tan_lo: f32,
    pub tan_hi: f32,
    pub vertical_scale: f32,
    pub flat_height: f32,
    pub height_min: f32,
    pub height_range: f32,
    pub max_dist: i32,
    pub unused: i32,
    /// Document texel of the gathered heights' first texel, and the texels gathered.
    pub gather_first: [i32; 2],
    pub gather_size: [i32; 2],
}

const _: () = assert!(std::mem::size_of::<LightPush>() == 104);

impl LightPush {
    /// The push constants lighting page `id` whole (its neighbours' bits left clear; narrow
    /// the region with [`Self::region`]).
    pub fn of(desc: &DocumentDesc, settings: &LightSettings, id: PageId, flat: f32) -> Self {
        let r = desc.page_rect(id);
        let el = settings.sun.elevation;
        let tan = |deg: f32| deg.clamp(0.0, 89.9).to_radians().tan();
        let [cw, ch] = coarse::size_of(desc);
        Self {
            origin: [r.x0, r.y0],
            first: [0, 0],
            size: [r.width(), r.height()],
            doc: [desc.width as i32, desc.height as i32],
            coarse_size: [cw as i32, ch as i32],
            sun_dir: settings.sun.dir(),
            side: desc.page_size as i32,
            present: 0,
            tan_lo: tan(el - SPREAD_DEG),
            tan_hi: tan(el + SPREAD_DEG),
            vertical_scale: settings.vertical_scale,
            flat_height: flat,
            height_min: desc.height_min,
            height_range: desc.height_range(),
            max_dist: MAX_DIST,
            unused: 0,
            gather_first: [0, 0],
            gather_size: [0, 0],
        }
    }

    /// The push constants of the far level's coarse texels `rect` (`render/lighting_far.comp`).
    pub fn far(desc: &DocumentDesc, settings: &LightSettings, rect: Rect) -> Self {
        Self {
            origin: [0, 0],
            first: [rect.x0, rect.y0],
            size: [rect.width(), rect.height()],
            side: 0,
            ..Self::of(desc, settings, PageId { x: 0, y: 0 }, 0.0)
        }
    }

    /// Lights only the page-local rectangle `local` of the page, gathering the heights of
    /// `gather` (document texels, [`gather_rect`]).
    pub fn region(self, local: Rect, gather: Rect) -> Self {
        Self {
            first: [local.x0, local.y0],
            size: [local.width(), local.height()],
            gather_first: [gather.x0, gather.y0],
            gather_size: [gather.width(), gather.height()],
            ..self
        }
    }
}

/// The document texels whose heights lighting the page-local rectangle `local` of page `id`
/// reads at full resolution: the occlusion horizons around it, and the bounding box of its
/// sweep toward the sun (taps rounded to the nearest texel, a texel of margin); inside the page
/// and its eight neighbours and the document. At most three pages square.
pub fn gather_rect(desc: &DocumentDesc, sun_dir: [f32; 2], id: PageId, local: Rect) -> Rect {
    let page = desc.page_rect(id);
    let side = desc.page_size as i32;
    let r = local.translate(page.x0, page.y0);
    let reach = 3.0 * side as f32;
    let (ex, ey) = (sun_dir[0] * reach, sun_dir[1] * reach);
    let swept = Rect::new(
        r.x0 + (ex.min(0.0).floor() as i32) - 1,
        r.y0 + (ey.min(0.0).floor() as i32) - 1,
        r.x1 + (ex.max(0.0).ceil() as i32) + 1,
        r.y1 + (ey.max(0.0).ceil() as i32) + 1,
    );
    let horizons = Rect::new(
        r.x0 - AO_RADIUS,
        r.y0 - AO_RADIUS,
        r.x1 + AO_RADIUS,
        r.y1 + AO_RADIUS,
    );
    let around = Rect::new(
        page.x0 - side,
        page.y0 - side,
        page.x1 + side,
        page.y1 + side,
    );
    swept
        .union(&horizons)
        .intersect(&around)
        .intersect(&Rect::new(0, 0, desc.width as i32, desc.height as i32))
}

/// The packed texel of sun visibility `sun` and occlusion `ao` (both 0..1).
pub fn pack(sun: f32, ao: f32) -> f32 {
    let q = |v: f32| (v * LEVELS as f32 + 0.5).floor() as u32;
    (q(sun) + 1024 * q(ao)) as f32
}

/// Sun visibility and occlusion of a packed texel.
pub fn unpack(v: f32) -> (f32, f32) {
    let u = v as u32;
    (
        (u & 1023) as f32 / LEVELS as f32,
        (u >> 10) as f32 / LEVELS as f32,
    )
}

/// The CPU twin of `render/lighting.comp` (`sunAt`, `aoAt`) for texel (x, y) of the page `p`
/// describes, `top` the document's highest world height (height x vertical scale): `height`
/// gives the (decoded) height of a texel of the page or its neighbours, `block_sum` the summed
/// heights of a coarse block (clamped into the level by the caller's indices).
pub fn light_texel(
    p: &LightPush,
    top: f32,
    height: &impl Fn(i32, i32) -> f32,
    block_sum: &impl Fn(i32, i32) -> f32,
    x: i32,
    y: i32,
) -> f32 {
    let vs = p.vertical_scale;
    let world = |gx: i32, gy: i32| height(gx, gy) * vs;
    let near = |gx: i32, gy: i32| {
        let (rx, ry) = (gx - p.origin[0], gy - p.origin[1]);
        rx >= -p.side && ry >= -p.side && rx < 2 * p.side && ry < 2 * p.side
    };
    let f = k::COARSE_FACTOR;
    let mean = |cx: i32, cy: i32| {
        let cx = cx.clamp(0, p.coarse_size[0] - 1);
        let cy = cy.clamp(0, p.coarse_size[1] - 1);
        let nx = f.min(p.doc[0] - cx * f);
        let ny = f.min(p.doc[1] - cy * f);
        block_sum(cx, cy) / (nx * ny) as f32 * vs
    };
    let coarse_at = |qx: f32, qy: f32| {
        let inv = 1.0 / f as f32;
        bilinear(&mean, qx * inv - 0.5, qy * inv - 0.5)
    };
    let b0 = world(x, y);
    let inside = |gx: i32, gy: i32| gx >= 0 && gy >= 0 && gx < p.doc[0] && gy < p.doc[1];
    // Exits that leave the result as it is: the sun has set; or nothing farther can rise above
    // the penumbra's lower edge or the horizon found.
    let exits = |tmax: f32, d: i32| tmax >= p.tan_hi || (top - b0) / d as f32 <= p.tan_lo.max(tmax);
    // Sun: every texel nearest the direction within LIGHT_FINE (an offset the same for every
    // texel), until one lies outside the document.
    let mut tmax = -1e30f32;
    let mut done = false;
    for d in 1..k::LIGHT_FINE {
        let [ox, oy] = fine_offset(p.sun_dir, d);
        let (gx, gy) = (x + ox, y + oy);
        if !inside(gx, gy) {
            done = true;
            break;
        }
        tmax = tmax.max((world(gx, gy) - b0) / d as f32);
        if exits(tmax, d) {
            done = true;
            break;
        }
    }
    // Then steps of a sixteenth of the distance from the sun's exact direction: full
    // resolution within the neighbours, the coarse level beyond.
    let mut d = k::LIGHT_FINE;
    while !done && d <= p.max_dist {
        let qx = x as f32 + p.sun_dir[0] * d as f32;
        let qy = y as f32 + p.sun_dir[1] * d as f32;
        if qx < 0.0 || qy < 0.0 || qx > (p.doc[0] - 1) as f32 || qy > (p.doc[1] - 1) as f32 {
            break;
        }
        let (gx, gy) = ((qx + 0.5).floor() as i32, (qy + 0.5).floor() as i32);
        let h = if near(gx, gy) {
            world(gx, gy)
        } else {
            coarse_at(qx, qy)
        };
        tmax = tmax.max((h - b0) / d as f32);
        if exits(tmax, d) {
            break;
        }
        d += d >> 4;
    }
    let sun = ((p.tan_hi - tmax) / (p.tan_hi - p.tan_lo)).clamp(0.0, 1.0);
    let ao = occlusion(p, x, y, &|gx, gy| world(gx, gy) - b0);
    pack(sun, ao)
}

/// `value` of the grid interpolated at grid position (u, v): along rows, then between them (the
/// shaders' order).
fn bilinear(value: &impl Fn(i32, i32) -> f32, u: f32, v: f32) -> f32 {
    let (fx, fy) = (u.floor(), v.floor());
    let (ix, iy) = (fx as i32, fy as i32);
    let (tx, ty) = (u - fx, v - fy);
    let a = value(ix, iy);
    let b = value(ix + 1, iy);
    let e = value(ix, iy + 1);
    let g = value(ix + 1, iy + 1);
    let north = a + tx * (b - a);
    let south = e + tx * (g - e);
    north + ty * (south - north)
}

/// The fine march's tap at distance `d`: the texel offset nearest `sun_dir` x `d` (the same
/// for every texel, growing with `d` on both axes).
pub fn fine_offset(sun_dir: [f32; 2], d: i32) -> [i32; 2] {
    sun_dir.map(|c| (c * d as f32 + 0.5).floor() as i32)
}

/// The CPU twin of `render/lighting_far.comp`: the far level's texel at coarse texel (cx, cy)
/// (the corner of block (cx, cy), document texel (64·cx, 64·cy)), `p` from [`LightPush::far`],
/// `top` the document's highest world height; `corner` gives a coarse texel's first height
/// (decoded; the twin clamps the indices into the level). The same model as [`light_texel`] on
/// the surface coarse nodes draw (corners, bilinear between): a march toward the sun from
/// [`k::LIGHT_FAR_STEP`] texels in steps of an eighth of the distance (at least that), and the
/// occlusion's horizons at the same taps.
pub fn far_texel(
    p: &LightPush,
    top: f32,
    corner: &impl Fn(i32, i32) -> f32,
    cx: i32,
    cy: i32,
) -> f32 {
    let vs = p.vertical_scale;
    let f = k::COARSE_FACTOR;
    let at = |ix: i32, iy: i32| {
        corner(
            ix.clamp(0, p.coarse_size[0] - 1),
            iy.clamp(0, p.coarse_size[1] - 1),
        ) * vs
    };
    let surface = |qx: f32, qy: f32| {
        let inv = 1.0 / f as f32;
        bilinear(&at, qx * inv, qy * inv)
    };
    let (x, y) = (cx * f, cy * f);
    let b0 = at(cx, cy);
    let exits = |tmax: f32, d: i32| {
        tmax >= p.tan_hi || top - b0 <= p.tan_lo.max(tmax) * d as f32 * (1.0 - 1e-6)
    };
    let mut tmax = -1e30f32;
    let mut d = k::LIGHT_FAR_STEP;
    while d <= p.max_dist {
        let qx = x as f32 + p.sun_dir[0] * d as f32;
        let qy = y as f32 + p.sun_dir[1] * d as f32;
        if qx < 0.0 || qy < 0.0 || qx > (p.doc[0] - 1) as f32 || qy > (p.doc[1] - 1) as f32 {
            break;
        }
        tmax = tmax.max((surface(qx, qy) - b0) / d as f32);
        if exits(tmax, d) {
            break;
        }
        d += (d >> 3).max(k::LIGHT_FAR_STEP);
    }
    let sun = ((p.tan_hi - tmax) / (p.tan_hi - p.tan_lo)).clamp(0.0, 1.0);
    let ao = occlusion(p, x, y, &|gx, gy| surface(gx as f32, gy as f32) - b0);
    pack(sun, ao)
}

/// Ambient occlusion at texel (x, y): 1 - the mean over eight directions of the sine of the
/// horizon's elevation, `rise` giving a texel's world height above (x, y)'s.
fn occlusion(p: &LightPush, x: i32, y: i32, rise: &impl Fn(i32, i32) -> f32) -> f32 {
    const DIRS: [(i32, i32); 8] = [
        (1, 0),
        (1, 1),
        (0, 1),
        (-1, 1),
        (-1, 0),
        (-1, -1),
        (0, -1),
        (1, -1),
    ];
    let mut occluded = 0.0f32;
    for (i, (dx, dy)) in DIRS.into_iter().enumerate() {
        let len = if i % 2 == 1 {
            std::f32::consts::SQRT_2
        } else {
            1.0
        };
        let mut t = 0.0f32;
        let mut d = 1;
        while d <= AO_RADIUS {
            let (gx, gy) = (x + dx * d, y + dy * d);
            if gx < 0 || gy < 0 || gx >= p.doc[0] || gy >= p.doc[1] {
                break;
            }
            t = t.max(rise(gx, gy) / (d as f32 * len));
            d += (d >> 1).max(1);
        }
        occluded += t / (1.0 + t * t).sqrt();
    }
    1.0 - occluded * 0.125
}

/// The far level of a document whose heights' coarse level is `level` (row-major, as
/// [`coarse::dense_level`] makes it), on the CPU: the twin of [`Lighting`]'s far pass.
pub fn cpu_far_lighting(
    desc: &DocumentDesc,
    level: &[[f32; 4]],
    settings: &LightSettings,
) -> Vec<f32> {
    let [cw, ch] = coarse::size_of(desc);
    let top = level.iter().map(|t| t[1]).fold(f32::MIN, f32::max) * settings.vertical_scale;
    let corner = |cx: i32, cy: i32| level[cy as usize * cw as usize + cx as usize][3];
    let p = LightPush::far(desc, settings, Rect::new(0, 0, cw as i32, ch as i32));
    (0..cw * ch)
        .into_par_iter()
        .map(|i| far_texel(&p, top, &corner, (i % cw) as i32, (i / cw) as i32))
        .collect()
}

/// The lighting of a whole document holding `heights` (row-major, decoded), on the CPU: the
/// twin of [`Lighting`] over every page.
pub fn cpu_lighting(desc: &DocumentDesc, heights: &[f32], settings: &LightSettings) -> Vec<f32> {
    let level = coarse::dense_level(desc, heights);
    let [cw, _] = coarse::size_of(desc);
    let top = heights.iter().copied().fold(f32::MIN, f32::max) * settings.vertical_scale;
    let w = desc.width as usize;
    let height = |x: i32, y: i32| heights[y as usize * w + x as usize];
    let block_sum = |cx: i32, cy: i32| level[cy as usize * cw as usize + cx as usize][2];
    let mut out = vec![0.0f32; heights.len()];
    out.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
        for (x, o) in row.iter_mut().enumerate() {
            let id = PageId {
                x: x as u32 / desc.page_size,
                y: y as u32 / desc.page_size,
            };
            let p = LightPush::of(desc, settings, id, 0.0);
            *o = light_texel(&p, top, &height, &block_sum, x as i32, y as i32);
        }
    });
    out
}

/// Pages whose lighting can depend on page `changed` ([`affected_by_rect`] of the page).
pub fn affected_by(desc: &DocumentDesc, sun: &Sun, changed: PageId) -> Vec<PageId> {
    affected_by_rect(desc, sun, desc.page_rect(changed))
}

/// Pages whose lighting can depend on the heights in `changed` (document texels): those whose
/// sun march (toward the sun, up to [`MAX_DIST`]) reads a texel of it or a 64² block mean over
/// it, or whose horizons reach it. Conservative: a strip of pages around the line from the
/// rectangle away from the sun.
pub fn affected_by_rect(desc: &DocumentDesc, sun: &Sun, changed: Rect) -> Vec<PageId> {
    let ps = desc.page_size as f32;
    let [dx, dy] = sun.dir();
    let centre = |r: Rect| ((r.x0 + r.x1) as f32 * 0.5, (r.y0 + r.y1) as f32 * 0.5);
    let half_diagonal = |r: Rect| 0.5 * (r.width() as f32).hypot(r.height() as f32);
    let (cx, cy) = centre(changed);
    // Half-diagonals of the rectangle and of a page; the interpolated block means read blocks
    // up to 1.5 blocks from the point sampled on each axis; a texel of rounding.
    let margin = half_diagonal(changed)
        + ps * std::f32::consts::FRAC_1_SQRT_2
        + 1.5 * k::COARSE_FACTOR as f32 * std::f32::consts::SQRT_2
        + 2.0;
    let reach = MAX_DIST as f32 + margin;
    let lo_x = ((cx - reach) / ps).floor().max(0.0) as u32;
    let lo_y = ((cy - reach) / ps).floor().max(0.0) as u32;
    let hi_x = (((cx + reach) / ps).ceil().max(0.0) as u32).min(desc.pages_x());
    let hi_y = (((cy + reach) / ps).ceil().max(0.0) as u32).min(desc.pages_y());
    let mut out = Vec::new();
    for y in lo_y..hi_y {
        for x in lo_x..hi_x {
            let id = PageId { x, y };
            let (qx, qy) = centre(desc.page_rect(id));
            let (ox, oy) = (cx - qx, cy - qy);
            let along = ox * dx + oy * dy;
            let across = (ox * dy - oy * dx).abs();
            if across <= margin && along >= -margin && along <= reach {
                out.push(id);
            }
        }
    }
    out
}

/// The texels whose lighting a change of the heights in `changed` (document texels) reaches
/// through the march's first [`k::LIGHT_FINE`] taps (every texel) or the occlusion horizons:
/// the rectangle moved back from the sun that far, and grown by [`AO_RADIUS`]; clipped to the
/// document. What lies farther along the strip is in [`affected_by_rect`].
pub fn near_region(desc: &DocumentDesc, sun: &Sun, changed: Rect) -> Rect {
    let [dx, dy] = sun.dir();
    let fine = k::LIGHT_FINE as f32;
    let (bx, by) = ((-dx * fine).round() as i32, (-dy * fine).round() as i32);
    let swept = changed.union(&changed.translate(bx, by));
    let grown = Rect::new(
        swept.x0 - AO_RADIUS - 1,
        swept.y0 - AO_RADIUS - 1,
        swept.x1 + AO_RADIUS + 1,
        swept.y1 + AO_RADIUS + 1,
    );
    grown.intersect(&Rect::new(0, 0, desc.width as i32, desc.height as i32))
}

/// What an update did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LightStats {
    /// Pages lit whole (strips an edit's shadows reach, everything after new settings).
    pub pages: usize,
    /// Texels lit near edits.
    pub near_texels: u64,
    /// Texels of the far level lit ([`Lighting::update`]).
    pub far_texels: u64,
    /// Pages still waiting (whole or in part).
    pub pending: usize,
    /// Of those, pages the renderer draws at page level ([`Lighting::want_first`]).
    pub pending_in_view: usize,
    /// GPU time of the lighting's submissions that finished since the last update, ms (0
    /// without timestamps).
    pub gpu_ms: f64,
}

/// Keeps [`FIELD`] up to date with the height field and the [`LightSettings`].
pub struct Lighting {
    gpu: Arc<Gpu>,
    kernel: ComputeKernel<LightPush>,
    /// Gathers a job's world heights from the nine pages into `gathered`.
    gather: ComputeKernel<LightPush>,
    /// Lights the far level (`render/lighting_far.comp`), with the set last bound (kept while
    /// it binds the same images).
    far_kernel: ComputeKernel<LightPush>,
    far_set: Option<([vk::ImageView; 3], DescriptorSet)>,
    /// Three pages square of world heights (r32f) per job of a submission, made for the page
    /// size in use.
    gathered: Vec<Image>,
    /// Bound for neighbours without an image (the gathering reads them as flat).
    dummy: Image,
    shown: Option<(LightSettings, DocumentDesc)>,
    /// The height field's epoch seen.
    seen: u64,
    /// Page-local rectangles to light at the next update whatever its budget: the texels near
    /// an edit.
    near: BTreeMap<PageId, Rect>,
    /// Pages to light whole as budgets allow: the strips an edit's shadows reach, every page
    /// after new settings.
    pending: BTreeSet<PageId>,
    /// Pages the renderer draws at page level: of the pages waiting whole, these are lit first
    /// (the view is lit before the rest of the document), and only these while following the
    /// view.
    wanted: Vec<PageId>,
    /// Whether only the pages the renderer draws at page level are lit ([`Self::follow_view`]).
    following: bool,
    /// While following the view: per page, the last update that wanted it (the pages kept
    /// lit beyond the view are those wanted last).
    last_wanted: HashMap<PageId, u64>,
    /// Updates so far.
    updates: u64,
    /// Of the pages the renderer draws at page level, those waiting after the last update.
    waiting_in_view: usize,
    /// Coarse texels of the far level to light at the next update.
    far: Option<Rect>,
    /// Most bytes of lit pages kept beyond the view while following it.
    kept_beyond_view: u64,
    /// Submits (detached with frames in flight) and measures GPU time per texel.
    submitter: Submitter,
    pub totals: LightStats,
}

impl Lighting {
    pub fn new(gpu: &Arc<Gpu>, format: HeightFormat) -> crate::gpu::Result<Self> {
        let gather = match format {
            HeightFormat::R32f => &shaders::RENDER_LIGHT_GATHER_COMP,
            HeightFormat::R16 => &shaders::RENDER_LIGHT_GATHER_R16_COMP,
        };
        Ok(Self {
            gpu: gpu.clone(),
            kernel: ComputeKernel::new(
                gpu,
                &shaders::RENDER_LIGHTING_COMP,
                &[BindingKind::StorageImage; 4],
                &[],
            )?,
            gather: ComputeKernel::new(gpu, gather, &[BindingKind::StorageImage; 10], &[])?,
            far_kernel: ComputeKernel::new(
                gpu,
                &shaders::RENDER_LIGHTING_FAR_COMP,
                &[BindingKind::StorageImage; 3],
                &[],
            )?,
            gathered: Vec::new(),
            dummy: super::placeholder::flat_page(gpu, format)?,
            shown: None,
            seen: 0,
            near: BTreeMap::new(),
            pending: BTreeSet::new(),
            wanted: Vec::new(),
            following: false,
            last_wanted: HashMap::new(),
            updates: 0,
            waiting_in_view: 0,
            far: None,
            far_set: None,
            kept_beyond_view: KEPT_BEYOND_VIEW,
            submitter: Submitter::new(gpu),
            totals: LightStats::default(),
        })
    }

    /// Pages waiting to be lit, whole or in part (while following the view, of those the
    /// renderer draws at page level), and 1 while the far level waits.
    pub fn pending(&self) -> usize {
        let whole = match self.following {
            true => self.waiting_in_view,
            false => self.pending.len(),
        };
        self.near.len() + whole + usize::from(self.far.is_some())
    }

    /// Of the pages the renderer draws at page level, those waiting whole or in part (while
    /// following the view, also those not lit yet), `lit` the pages the field holds.
    fn waiting_in_view(&self, lit: &BTreeSet<PageId>) -> usize {
        self.wanted
            .iter()
            .filter(|&&p| {
                waits_whole(&self.pending, lit, self.following, p) || self.near.contains_key(&p)
            })
            .count()
    }

    /// Lights at full resolution only the pages the renderer draws at page level (named by
    /// [`Self::want_first`] after each frame), as the editor and `scarp render` do: what is
    /// drawn coarse, and pages not lit yet, are shaded from the far level. Pages lit and no
    /// longer drawn are kept up to [`Self::keep_beyond_view`]'s bytes (those wanted last), and
    /// dropped, to be lit again when drawn, once an edit or new settings make them stale.
    /// Off (the default): every page the heights can shadow or occlude is lit.
    pub fn follow_view(&mut self, on: bool) {
        if self.following != on {
            // What waits depends on the mode: the next update starts afresh.
            self.shown = None;
        }
        self.following = on;
    }

    /// Keeps at most `bytes` of lit pages beyond the view while following it (default
    /// [`KEPT_BEYOND_VIEW`]).
    pub fn keep_beyond_view(&mut self, bytes: u64) {
        self.kept_beyond_view = bytes;
    }

    /// Pages the renderer draws at page level (`TerrainRenderer::pages_in_use`, in page order):
    /// later updates light those of them that wait whole, in this order, before any other page
    /// waiting whole (except one relit near an edit in the same update). The order changes when
    /// pages are lit, not what they are lit to.
    pub fn want_first(&mut self, pages: &[PageId]) {
        self.wanted.clear();
        self.wanted.extend_from_slice(pages);
        for &p in pages {
            self.last_wanted.insert(p, self.updates);
        }
    }

    /// With frames in flight, leaves the lighting's submissions running instead of waiting
    /// for them (what reads the field later follows them in queue order).
    pub fn set_detached(&mut self, detached: bool) {
        self.submitter.detached = detached;
    }

    /// Notes what changed since the last call and lights: the texels near edits
    /// ([`near_region`]) always, then pages waiting whole (the strips an edit's shadows reach,
    /// [`affected_by_rect`]; every page the heights can shadow or occlude after new settings or
    /// a new document) while their estimated GPU time fits `budget_ms` with the near texels'
    /// (all with None; at least one page when there is nothing near); then the far level
    /// where edits reach it. The result equals lighting every page afresh once nothing waits;
    /// while following the view ([`Self::follow_view`]), on the pages drawn at page level.
    pub fn update(
        &mut self,
        store: &mut PageStore,
        settings: &LightSettings,
        budget_ms: Option<f64>,
    ) -> Result<LightStats> {
        let _p = crate::profile::scope("render: lighting");
        let desc = *store.height().desc();
        let height = store.height();
        let same_doc = self.shown.is_some_and(|(_, d)| d == desc);
        if !same_doc || store.field(FIELD).is_none() {
            let f = height.derived(LIT, store.field(FIELD))?;
            store.insert_field(FIELD, f)?;
            self.shown = None;
            // Its coarse level is another image (a handle may be reused).
            self.far_set = None;
        }
        let height = store.height();
        // The pages lit, which following the view needs (without it, none is read).
        let lit = match self.following {
            true => lit_pages(store),
            false => BTreeSet::new(),
        };
        if self.shown != Some((*settings, desc)) {
            // Everything the heights can shadow or occlude, relit in place (the old lighting
            // shows until then); pages that can no longer be either read as fully lit. While
            // following the view: every lit page (those not drawn are dropped below).
            self.seen = height.changes().epoch();
            self.near.clear();
            self.pending.clear();
            match self.following {
                true => self.pending.extend(lit.iter().copied()),
                false => {
                    for (id, _) in height.versions().by_page() {
                        self.pending.extend(affected_by(&desc, &settings.sun, id));
                    }
                }
            }
            let [cw, ch] = coarse::size_of(&desc);
            self.far = Some(Rect::new(0, 0, cw as i32, ch as i32));
            let light = store.field_mut(FIELD).expect("made above");
            let stale: Vec<PageId> = light
                .versions()
                .by_page()
                .map(|(id, _)| id)
                .filter(|id| !self.pending.contains(id))
                .collect();
            if !stale.is_empty() {
                light.drop_pages(&stale);
            }
            self.shown = Some((*settings, desc));
        } else {
            let _p = crate::profile::scope("lighting: note edits");
            self.note_edits(height, &lit, &settings.sun);
        }
        self.updates += 1;
        let finished = self.submitter.collect()?;
        let mut stats = LightStats {
            gpu_ms: (finished.work_ns + finished.copy_ns) * 1e-6,
            ..LightStats::default()
        };
        let jobs = self.take_jobs(&desc, &lit, budget_ms);
        stats.pages = jobs.iter().filter(|(_, whole)| *whole).count();
        stats.near_texels = jobs
            .iter()
            .filter(|(_, whole)| !*whole)
            .map(|((_, r), _)| r.texels())
            .sum();
        if !jobs.is_empty() {
            let jobs: Vec<(PageId, Rect)> = jobs.into_iter().map(|(j, _)| j).collect();
            stats.gpu_ms += self.light(store, settings, &jobs)? * 1e-6;
        }
        if self.following {
            self.drop_beyond_view(store);
        }
        // The far level where edits reach it, and over pages dropped just now.
        if let Some(rect) = self.far.take() {
            stats.far_texels = rect.texels();
            stats.gpu_ms += self.light_far(store, settings, rect)? * 1e-6;
        }
        let lit = match self.following {
            true => lit_pages(store),
            false => lit,
        };
        self.waiting_in_view = self.waiting_in_view(&lit);
        stats.pending = self.pending();
        stats.pending_in_view = self.waiting_in_view;
        self.totals.pages += stats.pages;
        self.totals.near_texels += stats.near_texels;
        self.totals.far_texels += stats.far_texels;
        self.totals.gpu_ms += stats.gpu_ms;
        self.totals.pending = stats.pending;
        Ok(stats)
    }

    /// Notes the height field's changes since the last call: the texels near them to light at
    /// once, the pages farther along their strips to light whole.
    fn note_edits(&mut self, height: &Field, lit: &BTreeSet<PageId>, sun: &Sun) {
        let desc = *height.desc();
        let whole = |id: PageId| {
            let r = desc.page_rect(id);
            Rect::new(0, 0, r.width(), r.height())
        };
        let logged = height.changes().rects_or_pages_since(self.seen, &desc);
        self.seen = height.changes().epoch();
        let mut changed: BTreeMap<PageId, Rect> = BTreeMap::new();
        for (id, r) in logged {
            let e = changed.entry(id).or_insert(Rect::EMPTY);
            *e = e.union(&r);
        }
        for (id, local) in changed {
            let origin = desc.page_rect(id);
            let rect = local.translate(origin.x0, origin.y0);
            self.relight_far(far_region(&desc, sun, rect));
            let near = near_region(&desc, sun, rect);
            for p in desc.pages_in(&near) {
                let page = desc.page_rect(p);
                let local = near.intersect(&page).translate(-page.x0, -page.y0);
                let e = self.near.entry(p).or_insert(Rect::EMPTY);
                *e = e.union(&local);
            }
            for p in affected_by_rect(&desc, sun, rect) {
                // While following the view, a page not lit yet is lit when drawn anyway.
                let stale = !self.following || lit.contains(&p);
                if stale && self.near.get(&p) != Some(&whole(p)) {
                    self.pending.insert(p);
                }
            }
        }
        // A page waiting whole that is now near whole is lit whole at once.
        self.pending
            .retain(|p| self.near.get(p) != Some(&whole(*p)));
    }

    /// The work of this update: every near rectangle (false), then pages waiting whole (true),
    /// those the renderer wants first, while their estimated GPU time fits `budget_ms` (all with
    /// None; one when nothing is near and no estimate fits).
    fn take_jobs(
        &mut self,
        desc: &DocumentDesc,
        lit: &BTreeSet<PageId>,
        budget_ms: Option<f64>,
    ) -> Vec<((PageId, Rect), bool)> {
        let following = self.following;
        // While following the view, only lit pages drawn at page level are lit near an edit. A
        // lit page not drawn waits whole (and is dropped, [`Self::drop_beyond_view`]); a drawn
        // page never lit is lit whole below (a page lit in part would count as lit).
        let mut jobs: Vec<((PageId, Rect), bool)> = Vec::new();
        for (p, r) in std::mem::take(&mut self.near) {
            let (drawn, held) = (self.wanted.contains(&p), lit.contains(&p));
            match (following, drawn, held) {
                (false, _, _) | (true, true, true) => jobs.push(((p, r), false)),
                (true, false, true) => {
                    self.pending.insert(p);
                }
                (true, _, false) => {}
            }
        }
        let per_texel = self.submitter.unit_ns;
        let cost = |texels: u64| per_texel.map_or(f64::INFINITY, |ns| ns * texels as f64 * 1e-6);
        let mut spent: f64 = jobs.iter().map(|((_, r), _)| cost(r.texels())).sum();
        // Pages in view first, but not those relit near an edit in this update (the page under
        // a brush waits whole until the stroke has moved on, as it did before).
        let near: BTreeSet<PageId> = jobs.iter().map(|((id, _), _)| *id).collect();
        let mut wanted = self
            .wanted
            .iter()
            .copied()
            .filter(|&p| waits_whole(&self.pending, lit, following, p) && !near.contains(&p))
            .collect::<Vec<_>>()
            .into_iter();
        let rest = |pending: &BTreeSet<PageId>| match following {
            true => None,
            false => pending.first().copied(),
        };
        let mut taken = BTreeSet::new();
        while let Some(id) = wanted.next().or_else(|| rest(&self.pending)) {
            if !waits_whole(&self.pending, lit, following, id) || !taken.insert(id) {
                continue; // named twice
            }
            let page = desc.page_rect(id);
            let c = cost(page.texels());
            let fits = !budget_ms.is_some_and(|b| spent + c > b);
            if !fits && !jobs.is_empty() {
                break;
            }
            spent += c;
            self.pending.remove(&id);
            jobs.push(((id, Rect::new(0, 0, page.width(), page.height())), true));
            if !fits {
                break;
            }
        }
        jobs
    }

    /// Lights page-local rectangles `jobs` now; returns their GPU time when waited for (ns).
    fn light(
        &mut self,
        store: &mut PageStore,
        settings: &LightSettings,
        jobs: &[(PageId, Rect)],
    ) -> Result<f64> {
        let height = store.height_mut();
        {
            let _p = crate::profile::scope("lighting: coarse level");
            height.refresh_coarse()?;
        }
        let desc = *height.desc();
        let mut gpu_ns = 0.0;
        for chunk in jobs.chunks(PAGES_PER_SUBMIT) {
            let ids: Vec<PageId> = chunk.iter().map(|(id, _)| *id).collect();
            {
                let _p = crate::profile::scope("lighting: pages in, versions");
                store.prepare_derived(FIELD, &ids)?;
            }
            let plan = crate::profile::scope("lighting: plan and bind");
            self.grow_gathered(chunk.len(), 3 * desc.page_size)?;
            let work = plan_jobs(store, settings, chunk, &self.gathered, &self.dummy)?;
            let bind = |kernel: &ComputeKernel<LightPush>, images: &[&Image]| {
                let res: Vec<Resource> = images.iter().map(|i| Resource::StorageImage(i)).collect();
                kernel.bind(&res)
            };
            let sets = work
                .iter()
                .map(|job| {
                    Ok((
                        bind(&self.gather, &job.pages)?,
                        bind(&self.kernel, &job.lit)?,
                    ))
                })
                .collect::<crate::gpu::Result<Vec<_>>>()?;
            drop(plan);
            let _run = crate::profile::scope("lighting: record and submit");
            let kernels = [&self.gather, &self.kernel];
            gpu_ns += run_jobs(&self.gpu, kernels, &mut self.submitter, &work, &sets)?;
            store
                .field_mut(FIELD)
                .expect("made above")
                .mark_changed(ids);
        }
        Ok(gpu_ns)
    }

    /// Lights the far level's coarse texels `rect` now, into the lighting field's coarse level
    /// ([`Field::own_flat_blocks`]: the blocks of pages lit at full resolution are reduced from
    /// them again at the renderer's next refresh); returns their GPU time when waited for (ns).
    fn light_far(
        &mut self,
        store: &mut PageStore,
        settings: &LightSettings,
        rect: Rect,
    ) -> Result<f64> {
        let _p = crate::profile::scope("lighting: far level");
        store.height_mut().refresh_coarse()?;
        let desc = *store.height().desc();
        let [cw, ch] = coarse::size_of(&desc);
        let rect = rect.intersect(&Rect::new(0, 0, cw as i32, ch as i32));
        let light = store.field_mut(FIELD).expect("made by update");
        if rect.is_empty() || light.own_flat_blocks()?.is_none() {
            return Ok(0.0);
        }
        let (height, light) = (store.height(), store.field(FIELD).expect("made by update"));
        let coarse = height
            .coarse_level()
            .ok_or_else(|| PageError::NoField(format!("{HEIGHT} coarse level")))?;
        let top = coarse.pyramid().last().unwrap_or(coarse.image());
        let target = light.coarse_level().expect("owned above").image();
        let views = [coarse.image().view, top.view, target.view];
        if !self.far_set.as_ref().is_some_and(|(v, _)| *v == views) {
            let set = self.far_kernel.bind(&[
                Resource::StorageImage(coarse.image()),
                Resource::StorageImage(top),
                Resource::StorageImage(target),
            ])?;
            self.far_set = Some((views, set));
        }
        let (_, set) = self.far_set.as_ref().expect("bound above");
        let push = LightPush::far(&desc, settings, rect);
        let timer = self.submitter.timer()?;
        let mut rec = Recorder::new(&self.gpu)?;
        rec.image(coarse.image(), Access::ComputeStorageRead);
        rec.image(top, Access::ComputeStorageRead);
        rec.image(target, Access::ComputeStorageWrite);
        if let Some(t) = &timer {
            rec.reset_timer(t);
        }
        let [w, h] = push.size.map(|v| (v as u32).div_ceil(FAR_GROUP));
        rec.pass(&self.far_kernel, set)
            .push(&push)
            .timed(timer.as_ref(), "lighting: far level")
            .dispatch([w, h, 1])?;
        let ticket = self.submitter.send(rec)?;
        // No units of work: the far level's time does not pace the pages'.
        let times = self.submitter.finish(ticket, timer, 0)?;
        store
            .field_mut(FIELD)
            .expect("made by update")
            .wrote_flat_blocks(rect);
        Ok(times.map_or(0.0, |t| t.iter().map(|p| p.gpu_ns).sum()))
    }

    /// While following the view: drops the lit pages the renderer does not draw at page level
    /// that wait to be lit again, and beyond [`Self::keep_beyond_view`] those wanted longest
    /// ago. They read as the far level, and are lit whole when drawn (so `pending` holds lit
    /// pages only while following).
    fn drop_beyond_view(&mut self, store: &mut PageStore) {
        let Some(light) = store.field_mut(FIELD) else {
            return;
        };
        let wanted: BTreeSet<PageId> = self.wanted.iter().copied().collect();
        let (mut drop, mut kept): (Vec<PageId>, Vec<PageId>) = light
            .versions()
            .by_page()
            .map(|(id, _)| id)
            .filter(|id| !wanted.contains(id))
            .partition(|id| self.pending.contains(id));
        // A page on the GPU is a front and a back image.
        let page_bytes = u64::from(light.desc().page_size).pow(2) * 4 * 2;
        let most = (self.kept_beyond_view / page_bytes) as usize;
        if kept.len() > most {
            kept.sort_by_key(|id| self.last_wanted.get(id).copied().unwrap_or(0));
            drop.extend_from_slice(&kept[..kept.len() - most]);
        }
        let desc = *light.desc();
        let f = k::COARSE_FACTOR;
        for id in &drop {
            // Not lit any more: lit whole when drawn; its blocks read the far level again.
            self.pending.remove(id);
            let r = desc.page_rect(*id);
            let blocks = Rect::new(r.x0 / f, r.y0 / f, (r.x1 + f - 1) / f, (r.y1 + f - 1) / f);
            self.relight_far(blocks);
        }
        if !drop.is_empty() {
            light.drop_pages(&drop);
        }
    }

    /// Notes the far level's coarse texels `rect` for the next far pass.
    fn relight_far(&mut self, rect: Rect) {
        self.far = Some(self.far.map_or(rect, |f| f.union(&rect)));
    }

    /// At least `n` gathered-heights images, `side` texels a side (smaller ones are remade).
    fn grow_gathered(&mut self, n: usize, side: u32) -> Result<()> {
        if self
            .gathered
            .first()
            .is_some_and(|g| g.desc.extent.width < side)
        {
            self.gathered.clear();
        }
        while self.gathered.len() < n {
            self.gathered.push(Image::new(
                &self.gpu,
                "lighting: gathered heights",
                ImageDesc::new_2d(vk::Format::R32_SFLOAT, [side, side])
                    .usage(vk::ImageUsageFlags::STORAGE),
            )?);
        }
        Ok(())
    }
}

/// The pages the lighting field holds (lit at full resolution, whole or near an edit).
fn lit_pages(store: &PageStore) -> BTreeSet<PageId> {
    store
        .field(FIELD)
        .map(|f| f.versions().by_page().map(|(id, _)| id).collect())
        .unwrap_or_default()
}

/// Whether page `id` waits to be lit whole: `pending`, or, `following` the view, not `lit` yet.
fn waits_whole(
    pending: &BTreeSet<PageId>,
    lit: &BTreeSet<PageId>,
    following: bool,
    id: PageId,
) -> bool {
    pending.contains(&id) || (following && !lit.contains(&id))
}

/// One lighting job: its push constants; the nine pages around it and the gathered image
/// (gathering); the gathered image, the coarse level, the target and the pyramid's top
/// (lighting).
struct LightJob<'a> {
    push: LightPush,
    pages: Vec<&'a Image>,
    lit: [&'a Image; 4],
}

/// The jobs of `chunk`, each with its gathered image (`gathered[j]`); `dummy` stands in for
/// pages that hold no memory.
fn plan_jobs<'a>(
    store: &'a PageStore,
    settings: &LightSettings,
    chunk: &[(PageId, Rect)],
    gathered: &'a [Image],
    dummy: &'a Image,
) -> Result<Vec<LightJob<'a>>> {
    let (height, light) = (
        store.height(),
        store.field(FIELD).expect("made by make_room"),
    );
    let desc = *height.desc();
    let coarse = height
        .coarse_level()
        .ok_or_else(|| PageError::NoField(format!("{HEIGHT} coarse level")))?;
    let top = coarse.pyramid().last().unwrap_or(coarse.image());
    let mut work = Vec::with_capacity(chunk.len());
    for (&(id, local), gathered) in chunk.iter().zip(gathered) {
        let v = light.versions().page(id).expect("overwrite_pages made it");
        let target = light
            .places()
            .gpu_page(v)
            .map(|p| p.front())
            .ok_or_else(|| field::budget_too_small(light))?;
        let gather = gather_rect(&desc, settings.sun.dir(), id, local);
        let mut push = LightPush::of(&desc, settings, id, height.flat()).region(local, gather);
        let (mut pages, present) = field::neighbourhood(height, id, dummy);
        push.present |= present;
        pages.push(gathered);
        let lit = [gathered, coarse.image(), target, top];
        work.push(LightJob { push, pages, lit });
    }
    Ok(work)
}

/// Records `work` (every job's gathering, then every job's lighting: jobs run side by side)
/// with `kernels` (gather, light) and its `sets`, and submits it; returns its GPU time when
/// waited for (ns).
fn run_jobs(
    gpu: &Arc<Gpu>,
    [gather, light]: [&ComputeKernel<LightPush>; 2],
    submitter: &mut Submitter,
    work: &[LightJob],
    sets: &[(DescriptorSet, DescriptorSet)],
) -> Result<f64> {
    let timer = submitter.timer()?;
    let mut rec = Recorder::new(gpu)?;
    for job in work {
        let [_, coarse, _, top] = &job.lit;
        for image in job.pages[..9].iter().chain([coarse, top]) {
            rec.image(image, Access::ComputeStorageRead);
        }
    }
    rec.flush_barriers();
    let query = match &timer {
        Some(t) => {
            rec.reset_timer(t);
            Some((t, rec.timer_begin(t, "lighting")?))
        }
        None => None,
    };
    let groups = |size: [i32; 2]| {
        [
            (size[0] as u32).div_ceil(k::BRUSH_GROUP_X),
            (size[1] as u32).div_ceil(k::BRUSH_GROUP_Y),
            1,
        ]
    };
    for (job, (gather_set, _)) in work.iter().zip(sets) {
        rec.image(job.pages[9], Access::ComputeStorageWrite);
        rec.pass(gather, gather_set)
            .push(&job.push)
            .dispatch(groups(job.push.gather_size))?;
    }
    for job in work {
        let [gathered, _, target, _] = job.lit;
        rec.image(gathered, Access::ComputeStorageRead);
        rec.image(target, Access::ComputeStorageWrite);
    }
    let mut texels = 0;
    for (job, (_, set)) in work.iter().zip(sets) {
        texels += job.push.size[0] as usize * job.push.size[1] as usize;
        rec.pass(light, set)
            .push(&job.push)
            .dispatch(groups(job.push.size))?;
    }
    if let Some((t, q)) = query {
        rec.timer_end(t, q);
    }
    let ticket = submitter.send(rec)?;
    let Some(times) = submitter.finish(ticket, timer, texels)? else {
        return Ok(0.0);
    };
    let ns: f64 = times.iter().map(|p| p.gpu_ns).sum();
    if ns > 0.0 && texels > 0 {
        submitter.unit_ns = Some(ns / texels as f64);
    }
    Ok(ns)
}

/// A 1x1 RGBA32F image holding [`LIT`], ready for the shading pass: bound for the lighting's
/// coarse level while there is no lighting field (never read then).
pub(crate) fn lit_coarse_placeholder(gpu: &Arc<Gpu>) -> crate::gpu::Result<Image> {
    let format = vk::Format::R32G32B32A32_SFLOAT;
    super::placeholder::cleared(gpu, "lit coarse placeholder", format, LIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With a known height unit, shadows are cast by the true-scale ground at any exaggeration
    /// (a 90 m texel, 1 m height unit: 1/90); without one, by the relief as drawn.
    #[test]
    fn shadows_follow_the_true_scale_where_the_height_unit_is_known() {
        use crate::pages::geometry::{DocumentDesc, HeightFormat, Units};
        let sun = Sun {
            azimuth: 225.0,
            elevation: 30.0,
        };
        let mut desc = DocumentDesc {
            width: 400,
            height: 300,
            format: HeightFormat::R32f,
            page_size: 128,
            height_min: 0.0,
            height_max: 1000.0,
            units: Units {
                texel_size: Some(90.0),
                height_unit: Some(1.0),
                ..Units::default()
            },
        };
        for drawn in [1.0 / 90.0, 3.0 / 90.0, 0.5] {
            let l = LightSettings::for_view(sun, &desc, drawn);
            assert_eq!(l.vertical_scale, 1.0 / 90.0, "drawn at {drawn}");
        }
        desc.units = Units::default();
        assert_eq!(LightSettings::for_view(sun, &desc, 7.5).vertical_scale, 7.5);
    }

    /// The GPU tests only the first and the last fine tap against the document's edges: that
    /// holds when the offsets never step back on either axis, for any sun.
    #[test]
    fn fine_offsets_grow_with_distance_on_both_axes() {
        for tenth in 0..3600 {
            let sun = Sun {
                azimuth: tenth as f32 * 0.1,
                elevation: 30.0,
            };
            let dir = sun.dir();
            let mut prev = fine_offset(dir, 1);
            for d in 2..k::LIGHT_FINE {
                let o = fine_offset(dir, d);
                for axis in 0..2 {
                    let step = (o[axis] - prev[axis]) * dir[axis].signum() as i32;
                    assert!(step >= 0, "azimuth {}: d {d} steps back", sun.azimuth);
                }
                prev = o;
            }
            let last = fine_offset(dir, k::LIGHT_FINE - 1);
            assert!(last[0].abs().max(last[1].abs()) < k::LIGHT_FINE);
        }
    }
}

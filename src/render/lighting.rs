//! Sun shadows and ambient occlusion from the heights, in a derived field of the page store
//! ([`FIELD`], r32f, no undo) that the renderer reads per vertex: a page's texels are computed
//! on the GPU (`render/lighting.comp`) from the height pages around it and the height's coarse
//! level; [`light_texel`] is the CPU twin.
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
//!   SPREAD` (0): a soft penumbra. The march steps 1 texel at a time for 128 texels (what the
//!   page's neighbours hold at least: every peak nearby is hit), then a sixteenth of the
//!   distance so far (57 more taps to 4096), and stops once even the document's highest point
//!   could not rise above the penumbra's lower edge.
//! * ambient occlusion: 1 - the mean over eight directions of the sine of the horizon's
//!   elevation within [`AO_RADIUS`] texels (taps at 1, 2, 3, 4, 6, 9, 13, 19, 28, 42).
//! * both quantized to 1/1023 and packed as `sun + 1024 · ao` (exact in an f32; [`pack`]).

use crate::gpu::{
    shaders, vk, Access, BindingKind, ComputeKernel, Gpu, Image, ImageDesc, Recorder, Resource,
};
use crate::pages::geometry::{DocumentDesc, HeightFormat, PageId, NEIGHBOURHOOD};
use crate::pages::{coarse, Field, PageError, PageStore, HEIGHT};
use crate::shared_constants as k;
use bytemuck::{Pod, Zeroable};
use rayon::prelude::*;
use std::collections::BTreeSet;
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

/// Where the sun is: azimuth clockwise from north (north: decreasing rows, east: increasing
/// columns) and elevation above the horizon, degrees.
#[derive(Clone, Copy, Debug, PartialEq)]
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
    /// World y per height unit (the renderer's).
    pub vertical_scale: f32,
}

/// Push constants of `render/lighting.comp` (`lighting_shared.glsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct LightPush {
    pub origin: [i32; 2],
    pub size: [i32; 2],
    pub doc: [i32; 2],
    pub side: i32,
    pub present: u32,
    pub sun_dir: [f32; 2],
    pub tan_lo: f32,
    pub tan_hi: f32,
    pub vertical_scale: f32,
    pub flat_height: f32,
    pub height_min: f32,
    pub height_range: f32,
    pub top: f32,
    pub max_dist: i32,
    pub coarse_size: [i32; 2],
}

const _: () = assert!(std::mem::size_of::<LightPush>() == 80);

impl LightPush {
    /// The push constants of page `id` (its neighbours' bits left clear), `top` the document's
    /// highest height.
    pub fn of(
        desc: &DocumentDesc,
        settings: &LightSettings,
        id: PageId,
        flat: f32,
        top: f32,
    ) -> Self {
        let r = desc.page_rect(id);
        let el = settings.sun.elevation;
        let tan = |deg: f32| deg.clamp(0.0, 89.9).to_radians().tan();
        let [cw, ch] = coarse::size_of(desc);
        Self {
            origin: [r.x0, r.y0],
            size: [r.width(), r.height()],
            doc: [desc.width as i32, desc.height as i32],
            side: desc.page_size as i32,
            present: 0,
            sun_dir: settings.sun.dir(),
            tan_lo: tan(el - SPREAD_DEG),
            tan_hi: tan(el + SPREAD_DEG),
            vertical_scale: settings.vertical_scale,
            flat_height: flat,
            height_min: desc.height_min,
            height_range: desc.height_range(),
            top: top * settings.vertical_scale,
            max_dist: MAX_DIST,
            coarse_size: [cw as i32, ch as i32],
        }
    }
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

/// The CPU twin of `lighting_body.glsl` for texel (x, y) of the page `p` describes: `height`
/// gives the (decoded) height of a texel of the page or its neighbours, `block_sum` the summed
/// heights of a coarse block (clamped into the level by the caller's indices).
pub fn light_texel(
    p: &LightPush,
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
        let (cx, cy) = (qx * inv - 0.5, qy * inv - 0.5);
        let (fx, fy) = (cx.floor(), cy.floor());
        let (ix, iy) = (fx as i32, fy as i32);
        let (tx, ty) = (cx - fx, cy - fy);
        let a = mean(ix, iy);
        let b = mean(ix + 1, iy);
        let e = mean(ix, iy + 1);
        let g = mean(ix + 1, iy + 1);
        let top = a + tx * (b - a);
        let bottom = e + tx * (g - e);
        top + ty * (bottom - top)
    };
    let b0 = world(x, y);
    // Sun.
    let mut tmax = -1e30f32;
    let mut d = 1;
    while d <= p.max_dist {
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
        if (p.top - b0) / d as f32 <= p.tan_lo {
            break;
        }
        d += if d < k::LIGHT_FINE { 1 } else { d >> 4 };
    }
    let sun = ((p.tan_hi - tmax) / (p.tan_hi - p.tan_lo)).clamp(0.0, 1.0);
    // Occlusion.
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
            t = t.max((world(gx, gy) - b0) / (d as f32 * len));
            d += (d >> 1).max(1);
        }
        occluded += t / (1.0 + t * t).sqrt();
    }
    let ao = 1.0 - occluded * 0.125;
    pack(sun, ao)
}

/// The lighting of a whole document holding `heights` (row-major, decoded), on the CPU: the
/// twin of [`Lighting`] over every page.
pub fn cpu_lighting(desc: &DocumentDesc, heights: &[f32], settings: &LightSettings) -> Vec<f32> {
    let level = coarse::dense_level(desc, heights);
    let [cw, _] = coarse::size_of(desc);
    let top = heights.iter().copied().fold(f32::MIN, f32::max);
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
            let p = LightPush::of(desc, settings, id, 0.0, top);
            *o = light_texel(&p, &height, &block_sum, x as i32, y as i32);
        }
    });
    out
}

/// Pages whose lighting can depend on page `changed`: those whose sun march (toward the sun, up
/// to [`MAX_DIST`], reading 64² block means up to a block beyond its line) or whose horizons can
/// reach it. Conservative: a strip of pages around the line from `changed` away from the sun.
pub fn affected_by(desc: &DocumentDesc, sun: &Sun, changed: PageId) -> Vec<PageId> {
    let ps = desc.page_size as f32;
    let [dx, dy] = sun.dir();
    let centre = |id: PageId| ((id.x as f32 + 0.5) * ps, (id.y as f32 + 0.5) * ps);
    let (cx, cy) = centre(changed);
    // Half-diagonals of both pages, a coarse block for the interpolation and a texel of rounding.
    let margin = ps * std::f32::consts::SQRT_2 + 2.0 * k::COARSE_FACTOR as f32 + 2.0;
    let reach = MAX_DIST as f32 + margin;
    let lo_x = ((cx - reach) / ps).floor().max(0.0) as u32;
    let lo_y = ((cy - reach) / ps).floor().max(0.0) as u32;
    let hi_x = (((cx + reach) / ps).ceil() as u32).min(desc.pages_x());
    let hi_y = (((cy + reach) / ps).ceil() as u32).min(desc.pages_y());
    let mut out = Vec::new();
    for y in lo_y..hi_y {
        for x in lo_x..hi_x {
            let id = PageId { x, y };
            let (qx, qy) = centre(id);
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

/// What an update did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LightStats {
    /// Pages lit.
    pub pages: usize,
    /// Pages still waiting.
    pub pending: usize,
}

/// Keeps [`FIELD`] up to date with the height field and the [`LightSettings`].
pub struct Lighting {
    gpu: Arc<Gpu>,
    kernel: ComputeKernel<LightPush>,
    /// Bound for neighbours without an image (the kernel reads them as flat).
    dummy: Image,
    shown: Option<(LightSettings, DocumentDesc)>,
    /// The height field's epoch seen.
    seen: u64,
    /// Pages to light: near an edit first, then the rest of the strips.
    urgent: BTreeSet<PageId>,
    pending: BTreeSet<PageId>,
    pub totals: LightStats,
}

impl Lighting {
    pub fn new(gpu: &Arc<Gpu>, format: HeightFormat) -> crate::gpu::Result<Self> {
        let bindings = [BindingKind::StorageImage; 11];
        let shader = match format {
            HeightFormat::R32f => &shaders::RENDER_LIGHTING_COMP,
            HeightFormat::R16 => &shaders::RENDER_LIGHTING_R16_COMP,
        };
        Ok(Self {
            gpu: gpu.clone(),
            kernel: ComputeKernel::new(gpu, shader, &bindings, &[])?,
            dummy: super::TerrainRenderer::flat_placeholder(gpu, format)?,
            shown: None,
            seen: 0,
            urgent: BTreeSet::new(),
            pending: BTreeSet::new(),
            totals: LightStats::default(),
        })
    }

    /// Pages waiting to be lit.
    pub fn pending(&self) -> usize {
        self.urgent.len() + self.pending.len()
    }

    /// Notes what changed since the last call and lights up to `max_pages` of the pages waiting
    /// (all with None): the pages around edited ones first. New settings (or a new document)
    /// relight every page the heights can shadow or occlude; an edit, the pages whose sun march
    /// or horizons reach it ([`affected_by`]). The result equals lighting every page afresh.
    pub fn update(
        &mut self,
        store: &mut PageStore,
        settings: &LightSettings,
        max_pages: Option<usize>,
    ) -> Result<LightStats> {
        let _p = crate::profile::scope("render: lighting");
        let desc = *store.height().desc();
        let height = store.height();
        let same_doc = self.shown.is_some_and(|(_, d)| d == desc);
        if !same_doc || store.field(FIELD).is_none() {
            let f32_desc = crate::layers::composite::f32_desc(&desc);
            let mut f = Field::new(&self.gpu, f32_desc, LIT)?;
            f.set_budgets(height.budgets());
            f.set_frames_in_flight(height.frames_in_flight());
            if let Some(old) = store.field(FIELD) {
                f.succeed(old);
            }
            store.insert_field(FIELD, f)?;
            self.shown = None;
        }
        let height = store.height();
        if self.shown != Some((*settings, desc)) {
            // Everything the heights can shadow or occlude, relit in place (the old lighting
            // shows until then); pages that can no longer be either read as fully lit.
            let held: Vec<PageId> = height.versions_by_page().map(|(id, _)| id).collect();
            self.seen = height.epoch();
            self.urgent.clear();
            self.pending.clear();
            for id in held {
                self.pending.extend(affected_by(&desc, &settings.sun, id));
            }
            let light = store.field_mut(FIELD).expect("made above");
            let stale: Vec<PageId> = light
                .versions_by_page()
                .map(|(id, _)| id)
                .filter(|id| !self.pending.contains(id))
                .collect();
            if !stale.is_empty() {
                light.drop_pages(&stale);
            }
            self.shown = Some((*settings, desc));
        } else {
            let changed = height.values_changed_since(self.seen);
            self.seen = height.epoch();
            for id in changed {
                for (dx, dy) in NEIGHBOURHOOD {
                    if let Some(n) = desc.neighbour(id, dx, dy) {
                        self.urgent.insert(n);
                    }
                }
                self.pending.extend(affected_by(&desc, &settings.sun, id));
            }
        }
        let mut take: Vec<PageId> = Vec::new();
        let limit = max_pages.unwrap_or(usize::MAX);
        while take.len() < limit {
            let next = match self.urgent.pop_first() {
                Some(id) => Some(id),
                None => self.pending.pop_first(),
            };
            match next {
                Some(id) => {
                    self.pending.remove(&id);
                    take.push(id);
                }
                None => break,
            }
        }
        if !take.is_empty() {
            self.light(store, settings, &take)?;
        }
        let stats = LightStats {
            pages: take.len(),
            pending: self.pending(),
        };
        self.totals.pages += stats.pages;
        self.totals.pending = stats.pending;
        Ok(stats)
    }

    /// Lights pages `ids` now.
    fn light(
        &mut self,
        store: &mut PageStore,
        settings: &LightSettings,
        ids: &[PageId],
    ) -> Result<()> {
        let height = store.height_mut();
        height.refresh_coarse()?;
        let top = document_top(height)?;
        let desc = *height.desc();
        for chunk in ids.chunks(PAGES_PER_SUBMIT) {
            let mut around: BTreeSet<PageId> = BTreeSet::new();
            for &id in chunk {
                around.extend(
                    NEIGHBOURHOOD
                        .into_iter()
                        .filter_map(|(dx, dy)| desc.neighbour(id, dx, dy)),
                );
            }
            let around: Vec<PageId> = around.into_iter().collect();
            store.height_mut().ensure_visible(&around)?;
            let light = store
                .field_mut(FIELD)
                .ok_or_else(|| PageError::NoField(FIELD.to_string()))?;
            light.overwrite_pages(chunk)?;
            let (height, light) = (store.height(), store.field(FIELD).expect("made above"));
            let coarse = height
                .coarse_level()
                .ok_or_else(|| PageError::NoField(format!("{HEIGHT} coarse level")))?;
            let mut work = Vec::with_capacity(chunk.len());
            for &id in chunk {
                let v = light.page(id).expect("overwrite_pages made it");
                let target =
                    light
                        .gpu_page(v)
                        .map(|p| p.front())
                        .ok_or(PageError::BudgetTooSmall {
                            needed: light.page_bytes(),
                            budget: light.gpu_budget().unwrap_or(0),
                        })?;
                let mut push = LightPush::of(&desc, settings, id, height.flat(), top);
                let mut images: Vec<&Image> = Vec::with_capacity(11);
                for (slot, (dx, dy)) in NEIGHBOURHOOD.into_iter().enumerate() {
                    let image = desc
                        .neighbour(id, dx, dy)
                        .and_then(|n| height.visible_image(n));
                    if image.is_some() {
                        push.present |= 1 << slot;
                    }
                    images.push(image.unwrap_or(&self.dummy));
                }
                images.push(coarse.image());
                images.push(target);
                work.push((push, images));
            }
            let sets = work
                .iter()
                .map(|(_, images)| {
                    let res: Vec<Resource> =
                        images.iter().map(|i| Resource::StorageImage(i)).collect();
                    self.kernel.bind(&res)
                })
                .collect::<crate::gpu::Result<Vec<_>>>()?;
            let mut rec = Recorder::new(&self.gpu)?;
            for (_, images) in &work {
                for image in &images[..10] {
                    rec.image(image, Access::ComputeStorageRead);
                }
                rec.image(images[10], Access::ComputeStorageWrite);
            }
            rec.flush_barriers();
            for ((push, _), set) in work.iter().zip(&sets) {
                let groups = [
                    (push.size[0] as u32).div_ceil(k::BRUSH_GROUP_X),
                    (push.size[1] as u32).div_ceil(k::BRUSH_GROUP_Y),
                    1,
                ];
                rec.pass(&self.kernel, set).push(push).dispatch(groups)?;
            }
            rec.submit_and_wait()?;
            store
                .field_mut(FIELD)
                .expect("made above")
                .mark_changed(chunk.iter().copied());
        }
        Ok(())
    }
}

/// The highest height of `field` (its coarse pyramid's top; refreshed by the caller).
fn document_top(field: &Field) -> Result<f32> {
    let c = field
        .coarse_level()
        .ok_or_else(|| PageError::NoField(format!("{HEIGHT} coarse level")))?;
    let texels = match c.pyramid().len() {
        0 => c.read()?,
        n => c.read_pyramid(n)?,
    };
    Ok(texels.iter().map(|t| t[1]).fold(f32::MIN, f32::max))
}

/// A 1x1 RGBA32F image holding [`LIT`], ready for the shading pass: bound for the lighting's
/// coarse level while there is no lighting field (never read then).
pub(crate) fn lit_coarse_placeholder(gpu: &Arc<Gpu>) -> crate::gpu::Result<Image> {
    let image = Image::new(
        gpu,
        "lit coarse placeholder",
        ImageDesc::new_2d(vk::Format::R32G32B32A32_SFLOAT, [1, 1])
            .usage(vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::TRANSFER_DST),
    )?;
    let mut rec = Recorder::new(gpu)?;
    rec.clear_image(&image, LIT);
    rec.image(&image, Access::ComputeStorageRead);
    rec.submit_and_wait()?;
    Ok(image)
}

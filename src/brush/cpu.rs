//! The CPU twin of the brush engine: the same document, pages and instance order as the GPU,
//! applied texel by texel in f32 exactly as `shaders-glsl/brush/pointwise.comp` does. It is the
//! reference in tests and the baseline in benchmarks.

use super::stamp::stamp_position;
use super::{instances_reaching, level_texel, touched_pages, BrushSettings, BrushType};
use crate::brush::shared::BrushInstance;
use crate::noise::CpuTables;
use crate::pages::geometry::Region;
use crate::pages::geometry::{DocumentDesc, PageId, Rect};
use crate::pages::history::{History, DEFAULT_UNDO_BUDGET};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;

pub use crate::falloff::falloff;

/// Pages the squares of erosion instances reach, in page order.
fn touched_squares(d: &DocumentDesc, instances: &[BrushInstance]) -> Vec<PageId> {
    let mut ids: Vec<PageId> = instances
        .iter()
        .filter_map(|b| {
            let inst = crate::erosion::brush::Instance {
                center: b.center,
                radius: b.radius,
                ..Default::default()
            };
            crate::erosion::brush::square(d.width, d.height, &inst)
        })
        .flat_map(|sq| d.pages_in(&sq.rect()))
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// Per-texel weight of a weighted stroke, at document texel (x, y).
pub type Weight<'a> = dyn Fn(i32, i32) -> f32 + Sync + 'a;

/// A paged heightfield on the CPU with undo history.
pub struct CpuTerrain {
    desc: DocumentDesc,
    flat: f32,
    pages: BTreeMap<PageId, Arc<Vec<f32>>>,
    history: History<Arc<Vec<f32>>>,
    tables: Arc<CpuTables>,
}

impl CpuTerrain {
    /// A flat document at height `flat`.
    pub fn new(desc: DocumentDesc, flat: f32, tables: Arc<CpuTables>) -> Self {
        Self {
            desc,
            flat: desc.quantize(flat),
            pages: BTreeMap::new(),
            history: History::new(|p: &Arc<Vec<f32>>| p.len() as u64 * 4, DEFAULT_UNDO_BUDGET),
            tables,
        }
    }

    /// A document holding `heights` (row-major, width x height).
    pub fn from_heights(desc: DocumentDesc, heights: &[f32], tables: Arc<CpuTables>) -> Self {
        let mut t = Self::new(desc, 0.0, tables);
        for py in 0..desc.pages_y() {
            for px in 0..desc.pages_x() {
                let id = PageId { x: px, y: py };
                let page = desc
                    .page_from_dense(heights, id)
                    .into_iter()
                    .map(|h| desc.quantize(h))
                    .collect();
                t.pages.insert(id, Arc::new(page));
            }
        }
        t
    }

    pub fn desc(&self) -> &DocumentDesc {
        &self.desc
    }

    /// Pages that hold memory.
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }

    pub fn page(&self, id: PageId) -> Option<&Arc<Vec<f32>>> {
        self.pages.get(&id)
    }

    /// Height at texel (x, y), clamped into the document.
    pub fn height_at(&self, x: i32, y: i32) -> f32 {
        let (x, y) = self.desc.clamp_texel(x, y);
        let id = PageId {
            x: x as u32 / self.desc.page_size,
            y: y as u32 / self.desc.page_size,
        };
        match self.pages.get(&id) {
            Some(page) => {
                let r = self.desc.page_rect(id);
                page[((y - r.y0) * r.width() + (x - r.x0)) as usize]
            }
            None => self.flat,
        }
    }

    /// Applies one stroke's instances in order, as one undo step.
    pub fn apply_stroke(&mut self, brush: &BrushSettings, instances: &[BrushInstance]) {
        self.apply_stroke_toward(brush, instances, None);
    }

    /// [`Self::apply_stroke`] with the level target given (`None`: the height under the first
    /// instance, as the engine's `StrokeOrder::level_target`).
    pub fn apply_stroke_toward(
        &mut self,
        brush: &BrushSettings,
        instances: &[BrushInstance],
        level_target: Option<f32>,
    ) {
        if brush.brush.is_multitap() {
            return self.apply_multitap(brush, instances);
        }
        if brush.brush == BrushType::Erode {
            return self.apply_erosion(brush, instances);
        }
        if brush.brush.is_plane() {
            return self.apply_stroke_to_plane(brush, instances, None);
        }
        let target = level_target
            .unwrap_or_else(|| level_texel(instances).map_or(0.0, |(x, y)| self.height_at(x, y)));
        self.apply_pointwise(brush, instances, target, None);
    }

    /// A flatten or ramp stroke toward `plane` (`None`: the plane of this field's heights
    /// under the stroke, as the engine's `StrokeOrder::plane`): the plane's height at the origin
    /// as the target, its gradient in every instance's axis, as the engine passes them.
    pub fn apply_stroke_to_plane(
        &mut self,
        brush: &BrushSettings,
        instances: &[BrushInstance],
        plane: Option<super::Plane>,
    ) {
        let plane = match plane {
            Some(p) => p,
            None => {
                let Ok(Some(p)) = super::Plane::of_stroke(brush, instances, |x, y| {
                    Ok::<f32, std::convert::Infallible>(self.height_at(x, y))
                }) else {
                    return;
                };
                p
            }
        };
        let mut marked = instances.to_vec();
        plane.mark(&mut marked);
        self.apply_pointwise(brush, &marked, plane.at_origin, None);
    }

    /// A level stroke toward `target` whose instances' weights are multiplied by `weight(x, y)`
    /// (the engine's `StrokeOrder::weight`: the procedural mask brush).
    pub fn apply_stroke_weighted(
        &mut self,
        brush: &BrushSettings,
        instances: &[BrushInstance],
        target: f32,
        weight: &Weight<'_>,
    ) {
        assert_eq!(
            brush.brush,
            BrushType::Level,
            "weighted strokes are level strokes"
        );
        self.apply_pointwise(brush, instances, target, Some(weight));
    }

    fn apply_pointwise(
        &mut self,
        brush: &BrushSettings,
        instances: &[BrushInstance],
        target: f32,
        weight: Option<&Weight<'_>>,
    ) {
        let mut previous = Vec::new();
        for id in touched_pages(&self.desc, instances) {
            let r = self.desc.page_rect(id);
            let old = self.pages.get(&id).cloned();
            let mut page: Vec<f32> = match &old {
                Some(p) => p.as_ref().clone(),
                None => vec![self.flat; (r.width() * r.height()) as usize],
            };
            self.apply_to_page(&mut page, r, brush, instances, target, weight);
            self.pages.insert(id, Arc::new(page));
            previous.push((id, old));
        }
        self.history.record(previous);
    }

    /// Erosion: instance after instance, each over its square ([`crate::erosion::brush`], the
    /// CPU twin of the model), as one undo step.
    fn apply_erosion(&mut self, brush: &BrushSettings, instances: &[BrushInstance]) {
        let d = self.desc;
        let ids = touched_squares(&d, instances);
        let previous: Vec<(PageId, Option<Arc<Vec<f32>>>)> = ids
            .iter()
            .map(|id| (*id, self.pages.get(id).cloned()))
            .collect();
        let scale = d.vertical_scale();
        for b in instances {
            let inst = super::erosion_instance(b, brush);
            let Some(sq) = crate::erosion::brush::square(d.width, d.height, &inst) else {
                continue;
            };
            let rect = sq.rect();
            let mut values = self.read_rect(rect);
            let cpu = crate::erosion::brush::Backend::Cpu;
            crate::erosion::brush::erode_square(cpu, &mut values, sq, &inst, &brush.erosion, scale)
                .expect("the CPU twin does not fail");
            self.write_rect(rect, &values);
        }
        self.history.record(previous);
    }

    /// Erodes `region` with the CPU twin of the whole model as one undo step: the twin of
    /// [`crate::edit::erode::region`].
    pub fn erode_region(&mut self, region: Region, spec: &crate::erosion::run::RunSpec) {
        let whole = Region {
            x: 0,
            y: 0,
            ..region
        };
        self.rewrite_rect(region.rect(), |values| {
            crate::erosion::run::erode(None, values, region.width, whole, spec, |_| {})
                .expect("the CPU twin does not fail");
        });
    }

    /// Runs `run` over `region` with the CPU twin as one undo step (uplift 1 everywhere): the
    /// twin of [`crate::edit::geology::region`].
    pub fn geology_region(&mut self, region: Region, run: &crate::geology::params::GeologyRun) {
        let spec = crate::geology::run::RunSpec::of(run, &self.desc);
        self.rewrite_rect(region.rect(), |values| {
            let size = [region.width, region.height];
            crate::geology::run::run(None, values, size, None, &spec, None, |_, _, _| {})
                .expect("the CPU twin does not fail");
        });
    }

    /// The twin of [`crate::edit::path::apply`]: a path over the heights, one undo
    /// step (the spec checked by the caller).
    pub fn apply_path(&mut self, spec: &super::path::PathSpec) {
        let d = self.desc;
        let rect = super::path::rect_of(spec, d.width, d.height);
        self.rewrite_rect(rect, |values| {
            let plan = super::path::plan(spec, rect, values);
            super::path::apply_cpu(&plan, values);
        });
    }

    /// Rewrites the heights of `rect` (row-major) with `f` as one undo step.
    fn rewrite_rect(&mut self, rect: Rect, f: impl FnOnce(&mut [f32])) {
        let previous: Vec<(PageId, Option<Arc<Vec<f32>>>)> = self
            .desc
            .pages_in(&rect)
            .into_iter()
            .map(|id| (id, self.pages.get(&id).cloned()))
            .collect();
        let mut values = self.read_rect(rect);
        f(&mut values);
        self.write_rect(rect, &values);
        self.history.record(previous);
    }

    /// The heights of `rect`, row-major.
    fn read_rect(&self, rect: Rect) -> Vec<f32> {
        (rect.y0..rect.y1)
            .flat_map(|y| (rect.x0..rect.x1).map(move |x| (x, y)))
            .map(|(x, y)| self.height_at(x, y))
            .collect()
    }

    /// Writes `values` (row-major over `rect`) into the pages, quantized as the document
    /// stores them; no undo step.
    fn write_rect(&mut self, rect: Rect, values: &[f32]) {
        let d = self.desc;
        for id in d.pages_in(&rect) {
            let r = d.page_rect(id);
            let mut page: Vec<f32> = match self.pages.get(&id) {
                Some(p) => p.as_ref().clone(),
                None => vec![self.flat; (r.width() * r.height()) as usize],
            };
            let part = r.intersect(&rect);
            for y in part.y0..part.y1 {
                for x in part.x0..part.x1 {
                    let v = values[((y - rect.y0) * rect.width() + (x - rect.x0)) as usize];
                    page[((y - r.y0) * r.width() + (x - r.x0)) as usize] = d.quantize(v);
                }
            }
            self.pages.insert(id, Arc::new(page));
        }
    }

    /// Smooth/contrast: instance after instance over the whole document, each reading the state
    /// before it (`smooth.comp`'s arithmetic, taps clamped into the document).
    fn apply_multitap(&mut self, brush: &BrushSettings, instances: &[BrushInstance]) {
        let d = self.desc;
        let ids = touched_pages(&d, instances);
        let previous: Vec<(PageId, Option<Arc<Vec<f32>>>)> = ids
            .iter()
            .map(|id| (*id, self.pages.get(id).cloned()))
            .collect();
        for &id in &ids {
            let r = d.page_rect(id);
            self.pages
                .entry(id)
                .or_insert_with(|| Arc::new(vec![self.flat; (r.width() * r.height()) as usize]));
        }
        for b in instances {
            let reach = super::reach(b).intersect(&d.bounds());
            let mut updated = Vec::with_capacity((reach.width() * reach.height()) as usize);
            for y in reach.y0..reach.y1 {
                for x in reach.x0..reach.x1 {
                    let h = self.height_at(x, y);
                    let dist = ((x as f32 - b.center[0]).powi(2)
                        + (y as f32 - b.center[1]).powi(2))
                    .sqrt();
                    if dist < b.radius {
                        let mut sum = 0.0f32;
                        for ty in -1..=1i32 {
                            for tx in -1..=1i32 {
                                let w = ((2 - tx.abs()) * (2 - ty.abs())) as f32;
                                sum += w * self.height_at(x + tx, y + ty);
                            }
                        }
                        let k = (b.strength
                            * falloff(
                                dist,
                                b.radius,
                                b.inner_radius,
                                brush.falloff,
                                brush.falloff_power,
                            ))
                        .clamp(-1.0, 1.0);
                        updated.push(finite_or(d.quantize(h + k * (sum * (1.0 / 16.0) - h)), h));
                    } else {
                        updated.push(h);
                    }
                }
            }
            let mut values = updated.into_iter();
            for y in reach.y0..reach.y1 {
                for x in reach.x0..reach.x1 {
                    let v = values.next().expect("one value per texel");
                    let id = PageId {
                        x: x as u32 / d.page_size,
                        y: y as u32 / d.page_size,
                    };
                    let r = d.page_rect(id);
                    let page = Arc::make_mut(self.pages.get_mut(&id).expect("touched pages exist"));
                    page[((y - r.y0) * r.width() + (x - r.x0)) as usize] = v;
                }
            }
        }
        self.history.record(previous);
    }

    fn apply_to_page(
        &self,
        page: &mut [f32],
        r: Rect,
        brush: &BrushSettings,
        instances: &[BrushInstance],
        target: f32,
        weight: Option<&Weight<'_>>,
    ) {
        let params = brush.noise.params();
        let width = r.width() as usize;
        let desc = self.desc;
        // Only instances reaching this page, still in stroke order.
        let instances: Vec<&BrushInstance> = instances_reaching(instances, &r).collect();
        page.par_chunks_mut(width)
            .enumerate()
            .for_each(|(row, heights)| {
                let y = r.y0 + row as i32;
                for (col, h) in heights.iter_mut().enumerate() {
                    let p = [(r.x0 + col as i32) as f32, y as f32];
                    let mut m = 1.0f32;
                    let mut have_m = brush.brush != BrushType::Noise;
                    // Directional brushes evaluate their noise per instance, below.
                    for b in &instances {
                        let d =
                            ((p[0] - b.center[0]).powi(2) + (p[1] - b.center[1]).powi(2)).sqrt();
                        if d < b.radius {
                            let before = *h;
                            if !have_m {
                                let q = [
                                    params.offset[0] + params.scale * p[0],
                                    params.offset[1] + params.scale * p[1],
                                ];
                                m = self.tables.noise_at(brush.noise.kind, &params, q);
                                have_m = true;
                            }
                            if let (BrushType::Stamp, Some(stamp)) = (brush.brush, &brush.stamp) {
                                let size = [stamp.width as f32, stamp.height as f32];
                                m = stamp.sample(stamp_position(
                                    p,
                                    b.center,
                                    b.axis,
                                    b.radius * brush.stamp_scale,
                                    size,
                                ));
                            }
                            if brush.brush == BrushType::Directional {
                                let t = directional_input(p, b, brush.dir_ratio);
                                let q = [
                                    params.offset[0] + params.scale * t[0],
                                    params.offset[1] + params.scale * t[1],
                                ];
                                m = self.tables.noise_at(brush.noise.kind, &params, q);
                            }
                            let mut w = b.strength
                                * falloff(
                                    d,
                                    b.radius,
                                    b.inner_radius,
                                    brush.falloff,
                                    brush.falloff_power,
                                );
                            if let Some(f) = weight {
                                w *= f(r.x0 + col as i32, y);
                            }
                            if brush.brush == BrushType::Level {
                                *h += w.clamp(0.0, 1.0) * (target - *h);
                            } else if brush.brush == BrushType::Terrace {
                                let t = super::terrace_target(
                                    *h,
                                    brush.terrace_height,
                                    brush.terrace_sharpness,
                                );
                                *h += w.clamp(0.0, 1.0) * (t - *h);
                            } else if brush.brush.is_plane() {
                                let plane = super::Plane {
                                    at_origin: target,
                                    gradient: b.axis,
                                };
                                *h += w.clamp(0.0, 1.0) * (plane.at(p[0], p[1]) - *h);
                            } else {
                                *h += w * m;
                            }
                            *h = finite_or(desc.quantize(*h), before);
                        }
                    }
                }
            });
    }

    pub fn undo(&mut self) -> bool {
        self.history.undo(&mut self.pages)
    }

    pub fn redo(&mut self) -> bool {
        self.history.redo(&mut self.pages)
    }

    /// The whole document, row-major.
    pub fn to_dense(&self) -> Vec<f32> {
        let d = &self.desc;
        let mut out = vec![self.flat; d.width as usize * d.height as usize];
        for (id, page) in &self.pages {
            d.page_into_dense(page, *id, &mut out);
        }
        out
    }
}

/// `directionalInput` of brush.glsl: p compressed by `ratio` along the instance's axis, about
/// its centre.
pub fn directional_input(p: [f32; 2], b: &BrushInstance, ratio: f32) -> [f32; 2] {
    let u = b.axis;
    let along = ((1.0 / ratio) - 1.0) * ((p[0] - b.center[0]) * u[0] + (p[1] - b.center[1]) * u[1]);
    [p[0] + along * u[0], p[1] + along * u[1]]
}

/// `h`, or `before` when `h` is not finite: a brush overflowing f32 leaves the texel as it was
/// (the kernels' rule: `pointwise_body.glsl`, `smooth_body.glsl`).
fn finite_or(h: f32, before: f32) -> f32 {
    if h.is_finite() {
        h
    } else {
        before
    }
}

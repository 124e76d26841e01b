//! A surface map (slope, curvature, profile or plan curvature; docs/maps.md) as a derived field
//! of the page store, computed on the GPU page by page from the nine height pages around each
//! (`maps/surface_page.comp`) and kept up with the heights by their change epoch, as the
//! lighting is: an edit recomputes the pages its texels' 3×3 neighbourhoods reach, and nothing
//! else. [`twin`] is the CPU twin: [`super::cpu::maps_region`] over the whole document.

use super::{Surface, SurfacePagePush};
use crate::gpu::{shaders, Access, BindingKind, ComputeKernel, Gpu, Image, Recorder, Resource};
use crate::pages::geometry::{DocumentDesc, HeightFormat, PageId, Rect};
use crate::pages::{field, PageError, PageStore};
use crate::shared_constants as k;
use std::collections::BTreeSet;
use std::sync::Arc;

type Result<T, E = PageError> = std::result::Result<T, E>;

/// Pages computed per submission (each binds its own set).
const PAGES_PER_SUBMIT: usize = 32;

/// Which map a field holds, and how.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfaceMap {
    pub surface: Surface,
    /// Some(full): the two-sided tint `1 − clamp(v / full, −1, 1)` (the overlays' teal and
    /// orange around 1) instead of the map's value `v`.
    pub tint_full: Option<f32>,
}

impl SurfaceMap {
    /// The map of level ground (every surface map is 0 there): what a page far from any
    /// height reads.
    pub fn level(&self) -> f32 {
        self.value(0.0)
    }

    /// Its value at a texel whose map value is `v`.
    pub fn value(&self, v: f32) -> f32 {
        match self.tint_full {
            Some(full) => 1.0 - (v / full).clamp(-1.0, 1.0),
            None => v,
        }
    }
}

/// Keeps the field `name` of a store holding [`SurfaceMap`] of its heights.
pub struct SurfaceField {
    gpu: Arc<Gpu>,
    /// The height format its kernel reads.
    format: HeightFormat,
    kernel: ComputeKernel<SurfacePagePush>,
    /// Bound for neighbours without an image.
    dummy: Image,
    name: String,
    /// The map the field holds and the document it was made for.
    shown: Option<(SurfaceMap, DocumentDesc)>,
    /// The height field's epoch seen.
    seen: u64,
    /// Pages to compute within a texel of an edit, before any other.
    edited: BTreeSet<PageId>,
    /// Pages of a new map still to compute.
    pending: BTreeSet<PageId>,
}

impl SurfaceField {
    /// A field named `name` for documents of height `format`; nothing is computed yet.
    pub fn new(gpu: &Arc<Gpu>, format: HeightFormat, name: &str) -> crate::gpu::Result<Self> {
        let shader = match format {
            HeightFormat::R32f => &shaders::MAPS_SURFACE_PAGE_COMP,
            HeightFormat::R16 => &shaders::MAPS_SURFACE_PAGE_R16_COMP,
        };
        Ok(Self {
            gpu: gpu.clone(),
            format,
            kernel: ComputeKernel::new(gpu, shader, &[BindingKind::StorageImage; 10], &[])?,
            dummy: crate::render::placeholder::flat_page(gpu, format)?,
            name: name.to_string(),
            shown: None,
            seen: 0,
            edited: BTreeSet::new(),
            pending: BTreeSet::new(),
        })
    }

    /// The height format it reads (a document of another format needs another field).
    pub fn format(&self) -> HeightFormat {
        self.format
    }

    /// Pages still to compute.
    pub fn pending(&self) -> usize {
        self.edited.len() + self.pending.len()
    }

    /// Brings the field to `map` of the store's heights as they are now: after a new map or a
    /// new document every page the heights reach is to compute (the field reads as level
    /// ground until then), after edits the pages their neighbourhoods reach, first. Computes at
    /// most `most` pages of those waiting (all with None); returns how many it computed. A
    /// failed computation leaves its pages waiting.
    pub fn update(
        &mut self,
        store: &mut PageStore,
        map: SurfaceMap,
        most: Option<usize>,
    ) -> Result<usize> {
        let desc = *store.height().desc();
        let fresh = self.shown != Some((map, desc)) || store.field(&self.name).is_none();
        if fresh {
            let height = store.height();
            let f = height.derived(map.level(), store.field(&self.name))?;
            self.seen = height.changes().epoch();
            self.edited.clear();
            self.pending = height
                .versions()
                .by_page()
                .flat_map(|(id, _)| desc.neighbourhood(id))
                .collect();
            store.insert_field(&self.name, f)?;
            self.shown = Some((map, desc));
        } else {
            self.note_edits(store);
        }
        let n = most.unwrap_or(usize::MAX).min(self.pending());
        let ids: Vec<PageId> = (0..n)
            .filter_map(|_| self.edited.pop_first().or_else(|| self.pending.pop_first()))
            .collect();
        for (i, chunk) in ids.chunks(PAGES_PER_SUBMIT).enumerate() {
            if let Err(e) = self.compute(store, map, chunk) {
                self.edited.extend(&ids[i * PAGES_PER_SUBMIT..]);
                return Err(e);
            }
        }
        Ok(ids.len())
    }

    /// Notes the heights' changes since the last call: the pages within a texel of them.
    fn note_edits(&mut self, store: &PageStore) {
        let height = store.height();
        let desc = *height.desc();
        let logged = height.changes().rects_or_pages_since(self.seen, &desc);
        self.seen = height.changes().epoch();
        for (id, local) in logged {
            let origin = desc.page_rect(id);
            let r = local.translate(origin.x0, origin.y0);
            let reach = Rect::new(r.x0 - 1, r.y0 - 1, r.x1 + 1, r.y1 + 1);
            for id in desc.pages_in(&reach) {
                self.pending.remove(&id);
                self.edited.insert(id);
            }
        }
    }

    /// Computes pages `ids` of `map` now (one submission, waited for).
    fn compute(&mut self, store: &mut PageStore, map: SurfaceMap, ids: &[PageId]) -> Result<()> {
        let desc = *store.height().desc();
        store.prepare_derived(&self.name, ids)?;
        let name = self.name.clone();
        let no_field = || PageError::NoField(name.clone());
        let (height, out) = (store.height(), store.field(&name).ok_or_else(no_field)?);
        let mut jobs = Vec::with_capacity(ids.len());
        for &id in ids {
            let v = out.versions().page(id).expect("overwrite_pages made it");
            let target = out
                .places()
                .gpu_page(v)
                .map(|p| p.front())
                .ok_or_else(|| field::budget_too_small(out))?;
            let (mut pages, present) = field::neighbourhood(height, id, &self.dummy);
            pages.push(target);
            let push = SurfacePagePush::of(&desc, height.flat(), id, present, map);
            let res: Vec<Resource> = pages.iter().map(|i| Resource::StorageImage(i)).collect();
            jobs.push((push, pages, self.kernel.bind(&res)?));
        }
        let mut rec = Recorder::new(&self.gpu)?;
        for (_, pages, _) in &jobs {
            for image in &pages[..9] {
                rec.image(image, Access::ComputeStorageRead);
            }
            rec.image(pages[9], Access::ComputeStorageWrite);
        }
        for (push, _, set) in &jobs {
            let groups = [
                (push.size[0] as u32).div_ceil(k::BRUSH_GROUP_X),
                (push.size[1] as u32).div_ceil(k::BRUSH_GROUP_Y),
                1,
            ];
            rec.pass(&self.kernel, set).push(push).dispatch(groups)?;
        }
        rec.submit_and_wait()?;
        drop(jobs);
        store
            .field_mut(&name)
            .ok_or_else(no_field)?
            .mark_changed(ids.iter().copied());
        Ok(())
    }
}

/// The CPU twin: `map` of the whole document `d` whose heights are `heights` (row-major).
pub fn twin(heights: &[f32], d: &DocumentDesc, map: SurfaceMap) -> Vec<f32> {
    let push = super::MapsPush::new(
        d,
        [d.width, d.height],
        [0, 0],
        (0.0, 1.0),
        &crate::render::look::Materials::default(),
    );
    super::cpu::maps_region(heights, &push)
        .surface(map.surface)
        .map(|v| map.value(v))
        .collect()
}

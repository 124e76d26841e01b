//! One named field of a document: a sparse set of GPU pages in one format, with copy-on-write
//! versions, its undo history and the record of which pages changed when.
//!
//! * **Sparse.** A page that was never written holds no memory and reads as the field's flat
//!   value.
//! * **Versions.** An edit asks for new versions of the pages it touches
//!   ([`Field::begin_versions`]): each starts as a copy of the current version (or the flat
//!   value), the editor writes them while they are the *working* versions (shown, not yet
//!   committed), and [`Field::commit_versions`] makes them current and records the replaced
//!   versions as one undo step. Untouched pages stay shared between versions.
//! * **Places.** Versions live on the GPU, in host memory or on disk under the field's budgets
//!   ([`super::residency`]); whoever reads a version on the GPU asks for it first
//!   ([`Field::ensure_working`], [`Field::bring_in`]).
//! * **Changes.** Every change of what a page shows bumps the field's epoch and stamps the page;
//!   a reader (the renderer) keeps the epoch it has seen and asks what changed since
//!   ([`Field::changed_since`]), so any number of readers can follow one field through `&`.

use super::coarse::{CoarseLevel, PageSource};
use super::disk::DiskLoc;
use super::error::{PageError, Result};
use super::geometry::{DocumentDesc, HeightFormat, PageId, Rect};
use super::history::{History, DEFAULT_UNDO_BUDGET};
use super::page::GpuPage;
use super::residency::{Budgets, MemoryReport, Residency, Version};
use crate::gpu::{vk, Access, Buffer, BufferDesc, Gpu, GpuTimer, Image, Recorder};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::rc::Rc;
use std::sync::Arc;

/// Pages uploaded or read back per batch.
const PAGES_PER_TRANSFER: usize = 64;

/// New versions of the pages an edit touches, written before they are committed.
struct Working {
    ids: Vec<PageId>,
    versions: Vec<Rc<Version>>,
}

/// A named sparse field of page versions.
pub struct Field {
    gpu: Arc<Gpu>,
    desc: DocumentDesc,
    flat: f32,
    pages: BTreeMap<PageId, Rc<Version>>,
    history: History<Rc<Version>>,
    working: Option<Working>,
    places: Residency,
    /// The coarse level, made when first read (None before, and for documents past its largest
    /// size).
    coarse: Option<CoarseLevel>,
    /// Epoch of each page's last visible change (values changed, or its image moved).
    changes: BTreeMap<PageId, u64>,
    /// Epoch of each page's last change of values.
    value_changes: BTreeMap<PageId, u64>,
    /// Where values changed, oldest first: (epoch, page, page-local rectangle); at most
    /// [`RECT_LOG`] entries, older ones dropped (up to epoch `rects_dropped_through`).
    value_rects: VecDeque<(u64, PageId, Rect)>,
    rects_dropped_through: u64,
    epoch: u64,
}

/// Most entries of a field's log of changed rectangles ([`Field::value_rects_since`]).
pub const RECT_LOG: usize = 4096;

impl Field {
    /// A flat field at value `flat` (quantized to the format).
    pub fn new(gpu: &Arc<Gpu>, desc: DocumentDesc, flat: f32) -> Result<Self> {
        desc.validate().map_err(PageError::Document)?;
        if desc.format == HeightFormat::R16 && !gpu.supports_storage_format(vk::Format::R16_UNORM) {
            return Err(PageError::NoR16Storage {
                device: gpu.info().name.clone(),
            });
        }
        let flat = desc.quantize(flat);
        let format = match desc.format {
            HeightFormat::R32f => vk::Format::R32_SFLOAT,
            HeightFormat::R16 => vk::Format::R16_UNORM,
        };
        let clear = stored_value(&desc, flat);
        let places = Residency::new(gpu, desc, format, clear, encode(&desc, &[flat]));
        Ok(Self {
            coarse: None,
            gpu: gpu.clone(),
            desc,
            flat,
            pages: BTreeMap::new(),
            history: History::new(|v: &Rc<Version>| v.bytes(), DEFAULT_UNDO_BUDGET),
            working: None,
            places,
            changes: BTreeMap::new(),
            value_changes: BTreeMap::new(),
            value_rects: VecDeque::new(),
            rects_dropped_through: 0,
            epoch: 0,
        })
    }

    /// A field holding `heights` (row-major, width x height) in every page.
    pub fn from_heights(gpu: &Arc<Gpu>, desc: DocumentDesc, heights: &[f32]) -> Result<Self> {
        Self::from_heights_within(gpu, desc, heights, Budgets::default())
    }

    /// [`Self::from_heights`] under `budgets` from the start.
    pub fn from_heights_within(
        gpu: &Arc<Gpu>,
        desc: DocumentDesc,
        heights: &[f32],
        budgets: Budgets,
    ) -> Result<Self> {
        if heights.len() != desc.width as usize * desc.height as usize {
            return Err(PageError::WrongSize);
        }
        let mut f = Self::new(gpu, desc, 0.0)?;
        f.set_budgets(budgets);
        let ids: Vec<PageId> = desc.page_ids().collect();
        f.add_pages(
            ids.into_iter()
                .map(|id| Ok((id, desc.page_from_dense(heights, id)))),
        )?;
        Ok(f)
    }

    /// A field of flat value `flat` whose listed pages hold `pages` (each the page's texels,
    /// row-major): the inverse of [`Self::page_heights`].
    pub fn from_pages(
        gpu: &Arc<Gpu>,
        desc: DocumentDesc,
        flat: f32,
        pages: &[(PageId, Vec<f32>)],
    ) -> Result<Self> {
        let mut f = Self::new(gpu, desc, flat)?;
        f.add_pages(pages.iter().map(|(id, heights)| {
            check_page(&desc, *id, heights.len())?;
            Ok((*id, heights.clone()))
        }))?;
        Ok(f)
    }

    /// A field of flat value `flat` whose listed pages lie in a saved project, each read when
    /// first needed (its checksum checked then); `coarse`, the project's coarse level if it
    /// holds one (the whole level, row-major), saves reading every page to make it.
    pub fn from_disk(
        gpu: &Arc<Gpu>,
        desc: DocumentDesc,
        flat: f32,
        pages: Vec<(PageId, DiskLoc)>,
        coarse: Option<&[[f32; 4]]>,
        budgets: Budgets,
    ) -> Result<Self> {
        let mut f = Self::new(gpu, desc, flat)?;
        f.set_budgets(budgets);
        let texel = desc.texel_bytes();
        for (id, loc) in pages {
            if loc.len % texel != 0 {
                return Err(PageError::PageOutside { x: id.x, y: id.y });
            }
            check_page(&desc, id, (loc.len / texel) as usize)?;
            let v = f.places.from_disk(id, loc);
            f.pages.insert(id, v);
        }
        let ids: Vec<PageId> = f.pages.keys().copied().collect();
        match coarse {
            // The stored level is the pages' already: readers follow, nothing is reduced.
            Some(texels) => {
                f.coarse = CoarseLevel::from_texels(gpu, desc, texels)?;
                f.mark_moved(ids);
            }
            None => f.mark_changed(ids),
        }
        Ok(f)
    }

    /// Gives the listed pages new (unrecorded) versions holding the given values, a batch at a
    /// time onto the GPU (as far as the budget allows).
    fn add_pages(&mut self, pages: impl Iterator<Item = Result<(PageId, Vec<f32>)>>) -> Result<()> {
        let mut pages = pages.peekable();
        while pages.peek().is_some() {
            let mut batch = Vec::new();
            for item in pages.by_ref().take(PAGES_PER_TRANSFER) {
                let (id, heights) = item?;
                let v = self.places.from_bytes(id, encode(&self.desc, &heights));
                self.pages.insert(id, v.clone());
                batch.push((id, v));
            }
            // Onto the GPU as far as half the budget allows; the rest waits in host memory (or
            // on disk past the host budget) until needed.
            let room = self.gpu_budget().map_or(u64::MAX, |b| b / 2);
            let mut held = 0;
            let pins: Vec<&Version> = batch
                .iter()
                .map(|(_, v)| &**v)
                .take_while(|v| {
                    held += v.bytes();
                    held <= room
                })
                .collect();
            self.places.ensure(&pins, None)?;
            self.places.settle()?;
            self.mark_changed(batch.iter().map(|(id, _)| *id));
        }
        Ok(())
    }

    pub fn desc(&self) -> &DocumentDesc {
        &self.desc
    }

    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// The value of pages that hold no memory.
    pub fn flat(&self) -> f32 {
        self.flat
    }

    /// Pages that are not flat (wherever their versions live).
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }

    /// GPU bytes the current pages need on the GPU (history versions not included).
    pub fn page_bytes(&self) -> u64 {
        self.pages.values().map(|v| v.bytes()).sum()
    }

    /// The value an image of this field's format holds for (quantized) height `h`.
    pub fn stored_value(&self, h: f32) -> f32 {
        stored_value(&self.desc, h)
    }

    /// The committed version of a page, if it is not flat (for identity checks).
    pub fn page(&self, id: PageId) -> Option<&Rc<Version>> {
        self.pages.get(&id)
    }

    /// A version's GPU page, if it is on the GPU now.
    pub fn gpu_page(&self, v: &Version) -> Option<&GpuPage> {
        self.places.gpu_page(v)
    }

    /// The GPU budget of the field's pages (None: no limit).
    pub fn gpu_budget(&self) -> Option<u64> {
        self.places.budgets().gpu
    }

    /// Sets the memory budgets of the field's pages (met at the next `ensure_*`).
    pub fn set_budgets(&mut self, budgets: Budgets) {
        self.places.set_budgets(budgets);
    }

    /// Where the field's page versions are, its budgets and its traffic.
    pub fn memory(&self) -> MemoryReport {
        self.places.report()
    }

    /// Value at texel (x, y) of the committed field, clamped into the document (one texel read
    /// back, or its page read from host memory or disk).
    pub fn height_at(&self, x: i32, y: i32) -> Result<f32> {
        let (x, y) = self.desc.clamp_texel(x, y);
        let id = PageId {
            x: x as u32 / self.desc.page_size,
            y: y as u32 / self.desc.page_size,
        };
        let Some(v) = self.pages.get(&id) else {
            return Ok(self.flat);
        };
        let r = self.desc.page_rect(id);
        let texel = self.desc.texel_bytes();
        let Some(page) = self.places.gpu_page(v) else {
            let bytes = self.places.read(&[v])?.remove(0);
            let at = ((y - r.y0) * r.width() + (x - r.x0)) as usize * texel as usize;
            return Ok(decode(&self.desc, &bytes[at..at + texel as usize])[0]);
        };
        let readback = Buffer::new(&self.gpu, "texel readback", BufferDesc::readback(texel))?;
        let mut rec = Recorder::new(&self.gpu)?;
        rec.copy_image_region_to_buffer(page.front(), [x - r.x0, y - r.y0], [1, 1], &readback, 0);
        rec.buffer(&readback, Access::HostRead);
        rec.submit_and_wait()?;
        Ok(decode(&self.desc, readback.mapped(texel as usize)?)[0])
    }

    /// Starts an edit of `ids`: each gets a working version, made (a copy of the current version
    /// or the flat value) when first brought onto the GPU. With `join` (the edit continues the
    /// last undo step) a page that step already replaced is taken over and written in place.
    pub fn begin_versions(&mut self, ids: Vec<PageId>, join: bool) -> Result<()> {
        debug_assert!(self.working.is_none(), "an edit is already under way");
        let mut versions = Vec::with_capacity(ids.len());
        for &id in &ids {
            if join && self.history.last_step_holds(id) {
                if let Some(v) = self.pages.remove(&id) {
                    if Rc::strong_count(&v) == 1 {
                        self.places.will_write(&v);
                        versions.push(v);
                        continue;
                    }
                    self.pages.insert(id, v);
                }
            }
            let source = self.pages.get(&id).cloned();
            versions.push(self.places.pending(id, source));
        }
        // Readers now see the working versions' images.
        self.mark_moved(ids.iter().copied());
        self.working = Some(Working { ids, versions });
        Ok(())
    }

    /// The working versions (ids and versions, in the order given to [`Self::begin_versions`]).
    pub fn working(&self) -> (&[PageId], &[Rc<Version>]) {
        match &self.working {
            Some(w) => (&w.ids, &w.versions),
            None => (&[], &[]),
        }
    }

    /// Working version `i`'s GPU page, if it is on the GPU now.
    pub fn working_page(&self, i: usize) -> Option<&GpuPage> {
        let w = self.working.as_ref()?;
        self.places.gpu_page(&w.versions[i])
    }

    /// Brings working versions `indices` and the committed versions of `neighbours` (pages the
    /// wave reads; working ones and flat ones are skipped) onto the GPU. With `timer`, returns
    /// the GPU time of the transfers.
    pub fn ensure_working(
        &mut self,
        indices: &[usize],
        neighbours: &[PageId],
        timer: Option<&GpuTimer>,
    ) -> Result<f64> {
        let Some(w) = &self.working else {
            return Ok(0.0);
        };
        let mut pins: Vec<Rc<Version>> = indices.iter().map(|&i| w.versions[i].clone()).collect();
        for id in neighbours {
            if !w.ids.contains(id) {
                pins.extend(self.pages.get(id).cloned());
            }
        }
        self.ensure(&pins, timer)
    }

    fn ensure(&mut self, pins: &[Rc<Version>], timer: Option<&GpuTimer>) -> Result<f64> {
        let refs: Vec<&Version> = pins.iter().map(|v| &**v).collect();
        let (moved, ns) = self.places.ensure(&refs, timer)?;
        if !moved.is_empty() {
            // Readers bound the images of visible versions that moved: they changed for them.
            let visible = self.visible_keys();
            let ids: Vec<PageId> = moved
                .iter()
                .filter_map(|k| visible.get(k).copied())
                .collect();
            if !ids.is_empty() {
                self.mark_moved(ids);
            }
        }
        Ok(ns)
    }

    fn visible_keys(&self) -> HashMap<u64, PageId> {
        self.visible_versions()
            .into_iter()
            .map(|(id, v)| (v.key(), id))
            .collect()
    }

    /// The version of page `id` as it should be shown now: its working version if an edit is
    /// under way there, else the committed one; None for a flat page.
    fn visible_version(&self, id: PageId) -> Option<&Rc<Version>> {
        if let Some(w) = &self.working {
            if let Some(i) = w.ids.iter().position(|&p| p == id) {
                return Some(&w.versions[i]);
            }
        }
        self.pages.get(&id)
    }

    /// [`Self::visible_version`] of every page that is not flat.
    fn visible_versions(&self) -> BTreeMap<PageId, &Rc<Version>> {
        let mut visible: BTreeMap<PageId, &Rc<Version>> =
            self.pages.iter().map(|(&id, v)| (id, v)).collect();
        if let Some(w) = &self.working {
            visible.extend(w.ids.iter().copied().zip(&w.versions));
        }
        visible
    }

    /// Makes the working versions current; the versions they replace become one undo step
    /// (with `join`, part of the last step).
    pub fn commit_versions(&mut self, join: bool) {
        let Some(w) = self.working.take() else { return };
        let previous = w
            .ids
            .iter()
            .zip(w.versions)
            .map(|(&id, v)| (id, self.pages.insert(id, v)))
            .collect();
        if join {
            self.history.record_joined(previous);
        } else {
            self.history.record(previous);
        }
    }

    /// The image holding page `id`'s values as they should be shown now: its working version if
    /// an edit is under way there, else the committed one; None for a flat page, or one not on
    /// the GPU (renderers draw such pages coarse and ask for them: [`Self::bring_in`]).
    pub fn visible_image(&self, id: PageId) -> Option<&Image> {
        let v = self.visible_version(id)?;
        self.places.gpu_page(v).map(GpuPage::front)
    }

    /// Notes that the values of the listed pages changed (readers and the coarse level follow).
    pub fn mark_changed(&mut self, ids: impl IntoIterator<Item = PageId>) {
        let ids: Vec<PageId> = ids.into_iter().collect();
        if let Some(c) = &mut self.coarse {
            c.note(ids.iter().copied());
        }
        let whole: Vec<(PageId, Rect)> = ids
            .iter()
            .map(|&id| {
                let r = self.desc.page_rect(id);
                (id, Rect::new(0, 0, r.width(), r.height()))
            })
            .collect();
        self.mark_values(&ids, &whole);
        self.mark_moved(ids);
    }

    /// Notes the values of pages `ids` changed, inside the page-local `rects`.
    fn mark_values(&mut self, ids: &[PageId], rects: &[(PageId, Rect)]) {
        let epoch = self.epoch + 1;
        for &id in ids {
            self.value_changes.insert(id, epoch);
        }
        self.value_rects
            .extend(rects.iter().map(|&(id, r)| (epoch, id, r)));
        while self.value_rects.len() > RECT_LOG {
            let (e, _, _) = self.value_rects.pop_front().expect("longer than the log");
            self.rects_dropped_through = e;
        }
    }

    /// Notes that pages `ids` show new images whose values changed only inside the page-local
    /// `rects` (readers follow the pages; the coarse level reduces those rectangles).
    pub fn mark_changed_in(&mut self, ids: Vec<PageId>, rects: &[(PageId, Rect)]) {
        if let Some(c) = &mut self.coarse {
            c.note_rects(rects);
        }
        self.mark_values(&ids, rects);
        self.mark_moved(ids);
    }

    /// Notes that the images of the listed pages changed but not their values (moved between
    /// places): readers rebind them.
    fn mark_moved(&mut self, ids: impl IntoIterator<Item = PageId>) {
        self.epoch += 1;
        for id in ids {
            self.changes.insert(id, self.epoch);
        }
    }

    /// The coarse level as it is (call [`Self::refresh_coarse`] first for the latest values);
    /// None before its first refresh and past its largest size.
    pub fn coarse_level(&self) -> Option<&CoarseLevel> {
        self.coarse.as_ref()
    }

    /// The coarse level, brought up to date with every change (None for documents past its
    /// largest size).
    pub fn coarse(&mut self) -> Result<Option<&CoarseLevel>> {
        self.refresh_coarse()?;
        Ok(self.coarse.as_ref())
    }

    /// With frames in flight, the copies and clears that make page versions (copy-on-write) are
    /// not waited for ([`Residency::detached`]).
    pub fn set_frames_in_flight(&mut self, on: bool) {
        self.places.detached = on;
    }

    /// Reduces the pages changed since the last refresh into the coarse level: pages on the GPU
    /// there, the others (host memory, disk, flat) with the CPU twin.
    pub fn refresh_coarse(&mut self) -> Result<()> {
        // Made on first use with every page pending: until then edits need not note anything.
        let made = match self.coarse.take() {
            Some(c) => Some(c),
            None => CoarseLevel::new(&self.gpu, self.desc)?,
        };
        let Some(mut coarse) = made else {
            return Ok(());
        };
        let result = self.refresh_into(&mut coarse);
        self.coarse = Some(coarse);
        result
    }

    fn refresh_into(&self, coarse: &mut CoarseLevel) -> Result<()> {
        let visible = |id: PageId| self.visible_version(id);
        let mut flat = HashMap::new();
        for chunk in coarse.pending().chunks(256) {
            let off_gpu: Vec<(PageId, &Version)> = chunk
                .iter()
                .filter_map(|&id| visible(id).map(|v| (id, &**v)))
                .filter(|(_, v)| self.places.gpu_page(v).is_none())
                .collect();
            // Pages off the GPU are reduced where their bytes lie, in parallel.
            let refs: Vec<&Version> = off_gpu.iter().map(|(_, v)| *v).collect();
            let ids: Vec<PageId> = off_gpu.iter().map(|(id, _)| *id).collect();
            let d = &self.desc;
            let reduced = self.places.map_bytes(&refs, |i, b| {
                super::coarse::reduce_page(d, ids[i], &decode(d, b))
            })?;
            let mut texels: HashMap<PageId, Vec<[f32; 4]>> =
                off_gpu.iter().map(|(id, _)| *id).zip(reduced).collect();
            let mut pages = Vec::with_capacity(chunk.len());
            for &id in chunk {
                let source = match visible(id) {
                    Some(v) => match self.places.gpu_page(v) {
                        Some(p) => PageSource::Gpu(p.front()),
                        None => PageSource::Texels(texels.remove(&id).expect("reduced above")),
                    },
                    None => PageSource::Texels(
                        super::coarse::flat_page(&mut flat, &self.desc, id, self.flat).to_vec(),
                    ),
                };
                pages.push((id, source));
            }
            coarse.refresh(&pages)?;
        }
        Ok(())
    }

    /// Pages whose values changed after epoch `seen` (a subset of [`Self::changed_since`]'s:
    /// those not merely moved between places).
    pub fn values_changed_since(&self, seen: u64) -> Vec<PageId> {
        self.value_changes
            .iter()
            .filter(|(_, &e)| e > seen)
            .map(|(&id, _)| id)
            .collect()
    }

    /// Where values changed after epoch `seen`: page-local rectangles (a page may appear more
    /// than once); None when the log no longer reaches back that far (then every page of
    /// [`Self::values_changed_since`] counts as changed whole).
    pub fn value_rects_since(&self, seen: u64) -> Option<Vec<(PageId, Rect)>> {
        if seen < self.rects_dropped_through {
            return None;
        }
        let first = self.value_rects.partition_point(|&(e, _, _)| e <= seen);
        Some(
            self.value_rects
                .range(first..)
                .map(|&(_, id, r)| (id, r))
                .collect(),
        )
    }

    /// Whether page `id` can be drawn now: flat (no memory: it reads as [`Self::flat`]), or its
    /// visible version on the GPU.
    pub fn drawable(&self, id: PageId) -> bool {
        self.visible_version(id)
            .map_or(true, |v| self.places.gpu_page(v).is_some())
    }

    /// Whether page `id` holds no memory (every height is [`Self::flat`]).
    pub fn is_flat(&self, id: PageId) -> bool {
        self.visible_version(id).is_none()
    }

    /// Brings as many of `wanted` (in order: a prefix) onto the GPU as the budget allows while
    /// `keep` stays there (what frames draw from), with at most `max_bytes` of page-ins; pages of
    /// `wanted` already there count as brought and stay. Returns how many pages came. Never
    /// fails for lack of room: it brings fewer.
    pub fn bring_in(
        &mut self,
        wanted: &[PageId],
        keep: &[PageId],
        max_bytes: u64,
    ) -> Result<usize> {
        let visible = |ids: &[PageId]| -> Vec<Rc<Version>> {
            ids.iter()
                .filter_map(|&id| self.visible_version(id).cloned())
                .collect()
        };
        let kept = visible(keep);
        let mut want = Vec::new();
        let mut missing = Vec::new();
        let mut bytes = 0u64;
        for v in visible(wanted) {
            let absent = self.places.gpu_page(&v).is_none();
            if absent {
                if bytes + v.bytes() > max_bytes && bytes > 0 {
                    break;
                }
                bytes += v.bytes();
            }
            missing.push(absent);
            want.push(v);
        }
        // The longest prefix that fits the budget beside what is kept.
        let mut n = want.len();
        if let Some(budget) = self.gpu_budget() {
            let kept_keys: std::collections::HashSet<u64> = kept.iter().map(|v| v.key()).collect();
            let mut used: u64 = kept.iter().map(|v| v.bytes()).sum();
            n = want
                .iter()
                .take_while(|v| {
                    if !kept_keys.contains(&v.key()) {
                        used += v.bytes();
                    }
                    used <= budget
                })
                .count();
        }
        loop {
            let pins: Vec<Rc<Version>> = kept.iter().chain(&want[..n]).cloned().collect();
            match self.ensure(&pins, None) {
                Ok(_) => return Ok(missing[..n].iter().filter(|&&m| m).count()),
                Err(PageError::BudgetTooSmall { .. }) if n > 0 => n /= 2,
                Err(PageError::BudgetTooSmall { .. }) => return Ok(0),
                Err(e) => return Err(e),
            }
        }
    }

    /// Brings the versions shown now of pages `ids` (working or committed; flat pages have
    /// none) onto the GPU, for a reader that records work on them.
    pub fn ensure_visible(&mut self, ids: &[PageId]) -> Result<()> {
        let pins: Vec<Rc<Version>> = ids
            .iter()
            .filter_map(|&id| self.visible_version(id).cloned())
            .collect();
        self.ensure(&pins, None).map(|_| ())
    }

    /// For a derived field (one that keeps no undo steps: a composite, a cache): gives each of
    /// `ids` a committed version on the GPU for its writer to overwrite whole, in place (a page
    /// that was flat gets a new version holding the flat value until then). The writer then
    /// calls [`Self::mark_changed`].
    pub fn overwrite_pages(&mut self, ids: &[PageId]) -> Result<()> {
        debug_assert!(self.working.is_none(), "a derived field is never edited");
        for &id in ids {
            if !self.pages.contains_key(&id) {
                let v = self.places.pending(id, None);
                self.pages.insert(id, v);
            }
        }
        let pins: Vec<Rc<Version>> = ids.iter().map(|id| self.pages[id].clone()).collect();
        self.ensure(&pins, None)?;
        for id in ids {
            let v = &self.pages[id];
            if let Some(page) = self.places.gpu_page(v) {
                // The writer fills the front image: the back one is stale everywhere.
                let r = self.desc.page_rect(*id);
                page.set_stale(Rect::new(0, 0, r.width(), r.height()));
            }
        }
        Ok(())
    }

    /// Takes over from `old`, the field this one replaces under the same name: its change epoch
    /// continues `old`'s and every page counts as changed, so readers that followed `old`
    /// rebind every page.
    pub fn succeed(&mut self, old: &Field) {
        self.epoch = self.epoch.max(old.epoch);
        let all: Vec<PageId> = self.desc.page_ids().collect();
        self.mark_changed(all);
    }

    /// Brings the committed versions of pages `ids` (flat pages have none) onto the GPU.
    pub fn ensure_committed(&mut self, ids: &[PageId]) -> Result<()> {
        let pins: Vec<Rc<Version>> = ids
            .iter()
            .filter_map(|id| self.pages.get(id).cloned())
            .collect();
        self.ensure(&pins, None).map(|_| ())
    }

    /// Notes that working versions `indices` (of pages `ids`) had their front images written
    /// whole by a kernel: their back images are stale everywhere, and their values changed.
    pub fn wrote_working(&mut self, indices: &[usize], ids: &[PageId]) {
        for (&i, id) in indices.iter().zip(ids) {
            let r = self.desc.page_rect(*id);
            if let Some(p) = self.working_page(i) {
                p.set_stale(Rect::new(0, 0, r.width(), r.height()));
            }
        }
        self.mark_changed(ids.iter().copied());
    }

    /// Whether copies that make versions are left running ([`Self::set_frames_in_flight`]).
    pub fn frames_in_flight(&self) -> bool {
        self.places.detached
    }

    /// The field's memory budgets.
    pub fn budgets(&self) -> Budgets {
        self.places.budgets().clone()
    }

    /// Drops pages `ids` of a derived field: they read as the flat value again.
    pub fn drop_pages(&mut self, ids: &[PageId]) {
        debug_assert!(self.working.is_none(), "a derived field is never edited");
        for id in ids {
            self.pages.remove(id);
        }
        self.mark_changed(ids.iter().copied());
    }

    /// The current change epoch (0: nothing ever changed).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Pages whose shown values changed after epoch `seen`, and the epoch now (pass it next time).
    pub fn changed_since(&self, seen: u64) -> (Vec<PageId>, u64) {
        let ids = self
            .changes
            .iter()
            .filter(|(_, &e)| e > seen)
            .map(|(&id, _)| id)
            .collect();
        (ids, self.epoch)
    }

    fn versions(&self) -> BTreeMap<PageId, *const Version> {
        self.pages
            .iter()
            .map(|(&id, p)| (id, Rc::as_ptr(p)))
            .collect()
    }

    /// Marks every page whose version differs from `before` as changed.
    fn mark_swapped(&mut self, before: BTreeMap<PageId, *const Version>) {
        let after = self.versions();
        let swapped: Vec<PageId> = before
            .keys()
            .chain(after.keys())
            .filter(|id| before.get(id) != after.get(id))
            .copied()
            .collect();
        self.mark_changed(swapped);
    }

    /// Undoes the last step; false if there is none. No edit may be under way.
    pub fn undo(&mut self) -> bool {
        debug_assert!(self.working.is_none(), "undo during an edit");
        let before = self.versions();
        let done = self.history.undo(&mut self.pages);
        self.mark_swapped(before);
        done
    }

    /// Redoes the last undone step; false if there is none. No edit may be under way.
    pub fn redo(&mut self) -> bool {
        debug_assert!(self.working.is_none(), "redo during an edit");
        let before = self.versions();
        let done = self.history.redo(&mut self.pages);
        self.mark_swapped(before);
        done
    }

    /// Bounds the memory undo steps hold; the oldest steps are forgotten past it.
    pub fn set_undo_budget(&mut self, bytes: u64) {
        self.history.set_budget(bytes);
    }

    /// Memory the undo/redo steps' versions take (upper bound, counted as GPU image pairs).
    pub fn undo_bytes(&self) -> u64 {
        self.history.held_bytes()
    }

    /// Steps that can be undone now.
    pub fn undo_steps(&self) -> usize {
        self.history.can_undo()
    }

    /// The committed values of `rect` (document texels, inside the document), row-major.
    pub fn read_rect(&self, rect: Rect) -> Result<Vec<f32>> {
        let (w, h) = (rect.width() as usize, rect.height() as usize);
        let mut out = vec![self.flat; w * h];
        let ids: Vec<PageId> = self.desc.pages_in(&rect);
        let held: Vec<(PageId, &Rc<Version>)> = ids
            .iter()
            .filter_map(|id| self.pages.get(id).map(|v| (*id, v)))
            .collect();
        for chunk in held.chunks(PAGES_PER_TRANSFER) {
            let versions: Vec<&Version> = chunk.iter().map(|(_, v)| &***v).collect();
            for ((id, _), bytes) in chunk.iter().zip(self.places.read(&versions)?) {
                let values = decode(&self.desc, &bytes);
                let r = self.desc.page_rect(*id);
                let part = r.intersect(&rect);
                for y in part.y0..part.y1 {
                    let src = ((y - r.y0) * r.width() + (part.x0 - r.x0)) as usize;
                    let dst = ((y - rect.y0) as usize) * w + (part.x0 - rect.x0) as usize;
                    let n = part.width() as usize;
                    out[dst..dst + n].copy_from_slice(&values[src..src + n]);
                }
            }
        }
        Ok(out)
    }

    /// Writes `values` (row-major over `rect`, inside the document; quantized for r16 fields)
    /// as one undo step (with `join`, part of the last one): the pages `rect` touches get new
    /// versions holding their old values outside `rect`. No other edit may be under way.
    pub fn write_rect(&mut self, rect: Rect, values: &[f32], join: bool) -> Result<()> {
        assert_eq!(
            values.len(),
            (rect.width() * rect.height()) as usize,
            "values of the whole rectangle"
        );
        let ids = self.desc.pages_in(&rect);
        self.begin_versions(ids.clone(), join)?;
        let mut rects = Vec::with_capacity(ids.len());
        let r = self.write_working_rect(rect, values, &ids, &mut rects);
        // Noted even when a transfer failed part way: some pages may be written.
        self.mark_changed_in(ids, &rects);
        self.commit_versions(join);
        r
    }

    fn write_working_rect(
        &mut self,
        rect: Rect,
        values: &[f32],
        ids: &[PageId],
        rects: &mut Vec<(PageId, Rect)>,
    ) -> Result<()> {
        let w = rect.width() as usize;
        for (c, chunk) in ids.chunks(PAGES_PER_TRANSFER).enumerate() {
            let first = c * PAGES_PER_TRANSFER;
            let indices: Vec<usize> = (first..first + chunk.len()).collect();
            self.ensure_working(&indices, &[], None)?;
            let mut parts = Vec::with_capacity(chunk.len());
            let mut bytes: Vec<u8> = Vec::new();
            for id in chunk {
                let r = self.desc.page_rect(*id);
                let part = r.intersect(&rect);
                let offset = bytes.len() as u64;
                for y in part.y0..part.y1 {
                    let src = ((y - rect.y0) as usize) * w + (part.x0 - rect.x0) as usize;
                    bytes.extend(encode(
                        &self.desc,
                        &values[src..src + part.width() as usize],
                    ));
                }
                parts.push((offset, part.translate(-r.x0, -r.y0)));
                rects.push((*id, part.translate(-r.x0, -r.y0)));
            }
            let mut up = Buffer::new(
                &self.gpu,
                "rectangle upload",
                BufferDesc::upload(bytes.len() as u64),
            )?;
            up.write(&bytes)?;
            let mut rec = Recorder::new(&self.gpu)?;
            rec.buffer(&up, Access::HostWrite);
            for (&i, (offset, local)) in indices.iter().zip(&parts) {
                let page = self.working_page(i).ok_or(PageError::BudgetTooSmall {
                    needed: self.page_bytes(),
                    budget: self.gpu_budget().unwrap_or(0),
                })?;
                rec.copy_buffer_to_image_region(
                    &up,
                    *offset,
                    page.front(),
                    [local.x0, local.y0],
                    [local.width() as u32, local.height() as u32],
                );
                // The back image lacks what the front one now has.
                page.set_stale(page.stale().union(local));
            }
            rec.submit_and_wait()?;
        }
        Ok(())
    }

    /// Starts an edit of `rect` done on the GPU (r32f fields: texels move as f32): the pages it
    /// touches get working versions ([`Self::begin_versions`], `join` as there) brought onto
    /// the GPU; the caller records reads and writes of them with [`Self::record_rect_out`] and
    /// [`Self::record_rect_in`], submits, and ends with [`Self::end_rect_edit`]. Fails (nothing
    /// changed) when the pages do not fit the GPU budget together.
    pub fn begin_rect_edit(&mut self, rect: Rect, join: bool) -> Result<()> {
        assert_eq!(self.desc.format, HeightFormat::R32f, "texels move as f32");
        let ids = self.desc.pages_in(&rect);
        let indices: Vec<usize> = (0..ids.len()).collect();
        self.begin_versions(ids, join)?;
        let fits = self
            .ensure_working(&indices, &[], None)
            .map(|_| indices.iter().all(|&i| self.working_page(i).is_some()));
        match fits {
            Ok(true) => Ok(()),
            other => {
                // Nothing was written: the working versions hold the old values.
                self.commit_versions(join);
                other?;
                Err(PageError::BudgetTooSmall {
                    needed: self.page_bytes() * indices.len() as u64,
                    budget: self.gpu_budget().unwrap_or(0),
                })
            }
        }
    }

    /// The working pages of a rect edit with their page rectangles and their parts in `rect`.
    fn rect_parts(&self, rect: Rect) -> impl Iterator<Item = (&GpuPage, Rect, Rect)> {
        let (ids, _) = self.working();
        ids.iter().enumerate().map(move |(i, id)| {
            let page = self
                .working_page(i)
                .expect("begin_rect_edit brought them in");
            let r = self.desc.page_rect(*id);
            (page, r, r.intersect(&rect))
        })
    }

    /// Records copies of `rect` out of the edit's working pages into `dst`: f32 texels,
    /// row-major over `rect` from byte 0.
    pub fn record_rect_out<'a>(&'a self, rec: &mut Recorder<'a>, rect: Rect, dst: &'a Buffer) {
        for (page, r, part) in self.rect_parts(rect) {
            let offset = ((part.y0 - rect.y0) * rect.width() + (part.x0 - rect.x0)) as u64 * 4;
            rec.copy_image_region_to_buffer_rows(
                page.front(),
                [part.x0 - r.x0, part.y0 - r.y0],
                [part.width() as u32, part.height() as u32],
                dst,
                offset,
                rect.width() as u32,
            );
        }
    }

    /// Records copies of `src` (f32 texels, row-major over `rect` from byte 0) into the edit's
    /// working pages.
    pub fn record_rect_in<'a>(&'a self, rec: &mut Recorder<'a>, rect: Rect, src: &'a Buffer) {
        for (page, r, part) in self.rect_parts(rect) {
            let offset = ((part.y0 - rect.y0) * rect.width() + (part.x0 - rect.x0)) as u64 * 4;
            rec.copy_buffer_rows_to_image(
                src,
                offset,
                rect.width() as u32,
                page.front(),
                [part.x0 - r.x0, part.y0 - r.y0],
                [part.width() as u32, part.height() as u32],
            );
            // The back image lacks what the front one now has.
            let local = part.translate(-r.x0, -r.y0);
            page.set_stale(page.stale().union(&local));
        }
    }

    /// Ends a rect edit once its recorded work is submitted: the values changed inside `rect`,
    /// and the working versions become current as one undo step (with `join`, part of the last).
    pub fn end_rect_edit(&mut self, rect: Rect, join: bool) {
        let ids = self.working().0.to_vec();
        let rects: Vec<(PageId, Rect)> = ids
            .iter()
            .map(|id| {
                let r = self.desc.page_rect(*id);
                (*id, r.intersect(&rect).translate(-r.x0, -r.y0))
            })
            .collect();
        self.mark_changed_in(ids, &rects);
        self.commit_versions(join);
    }

    /// The committed field, row-major.
    pub fn to_dense(&self) -> Result<Vec<f32>> {
        let d = self.desc;
        let mut out = vec![self.flat; d.width as usize * d.height as usize];
        self.for_each_page(|id, heights| {
            d.page_into_dense(&heights, id, &mut out);
            Ok(())
        })?;
        Ok(out)
    }

    /// The values of every committed page that is not flat, in page order; pages not listed
    /// are flat.
    pub fn page_heights(&self) -> Result<Vec<(PageId, Vec<f32>)>> {
        let mut out = Vec::with_capacity(self.pages.len());
        self.for_each_page(|id, heights| {
            out.push((id, heights));
            Ok(())
        })?;
        Ok(out)
    }

    /// Calls `f` with the values of every committed page that is not flat, in page order, a
    /// batch at a time (wherever the pages live; none is moved).
    pub fn for_each_page(&self, mut f: impl FnMut(PageId, Vec<f32>) -> Result<()>) -> Result<()> {
        self.for_each_page_bytes(|id, _, bytes| f(id, decode(&self.desc, &bytes)))
    }

    /// Calls `f` with the stored bytes (texels as the images hold them) of every committed page
    /// that is not flat and its version, in page order, a batch at a time.
    pub fn for_each_page_bytes(
        &self,
        mut f: impl FnMut(PageId, &Rc<Version>, Vec<u8>) -> Result<()>,
    ) -> Result<()> {
        let entries: Vec<(&PageId, &Rc<Version>)> = self.pages.iter().collect();
        for chunk in entries.chunks(PAGES_PER_TRANSFER) {
            let versions: Vec<&Version> = chunk.iter().map(|(_, v)| &***v).collect();
            for ((id, v), bytes) in chunk.iter().zip(self.places.read(&versions)?) {
                f(**id, v, bytes)?;
            }
        }
        Ok(())
    }

    /// The stored bytes of `versions` (texels as the images hold them), wherever they live.
    pub fn read_bytes(&self, versions: &[&Version]) -> Result<Vec<Vec<u8>>> {
        let mut out = Vec::with_capacity(versions.len());
        for chunk in versions.chunks(PAGES_PER_TRANSFER) {
            out.extend(self.places.read(chunk)?);
        }
        Ok(out)
    }

    /// Where `v`'s bytes lie in the project last saved, if unchanged since.
    pub fn saved(&self, v: &Version) -> Option<&DiskLoc> {
        self.places.saved(v)
    }

    /// Records that `v`'s bytes lie at `loc` of the project just saved.
    pub fn set_saved(&mut self, v: &Version, loc: DiskLoc) {
        self.places.set_saved(v, loc);
    }

    /// The committed versions of the pages that are not flat, in page order.
    pub fn versions_by_page(&self) -> impl Iterator<Item = (PageId, &Rc<Version>)> {
        self.pages.iter().map(|(&id, v)| (id, v))
    }
}

/// Checks that page `id` lies in the document and `texels` fits it.
fn check_page(desc: &DocumentDesc, id: PageId, texels: usize) -> Result<()> {
    let fits = id.x < desc.pages_x() && id.y < desc.pages_y();
    if !fits {
        return Err(PageError::PageOutside { x: id.x, y: id.y });
    }
    if texels as u64 != desc.page_rect(id).texels() {
        return Err(PageError::PageOutside { x: id.x, y: id.y });
    }
    Ok(())
}

/// The value an image of `desc`'s format holds for (quantized) height `h`.
fn stored_value(desc: &DocumentDesc, h: f32) -> f32 {
    match desc.format {
        HeightFormat::R32f => h,
        HeightFormat::R16 => f32::from(desc.encode_r16(h)) / 65535.0,
    }
}

/// Heights as the page images store them, tightly packed.
pub fn encode(desc: &DocumentDesc, heights: &[f32]) -> Vec<u8> {
    match desc.format {
        HeightFormat::R32f => heights.iter().flat_map(|h| h.to_le_bytes()).collect(),
        HeightFormat::R16 => heights
            .iter()
            .flat_map(|&h| desc.encode_r16(h).to_le_bytes())
            .collect(),
    }
}

/// Heights from tightly packed page texels.
pub fn decode(desc: &DocumentDesc, bytes: &[u8]) -> Vec<f32> {
    match desc.format {
        HeightFormat::R32f => bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        HeightFormat::R16 => bytes
            .chunks_exact(2)
            .map(|c| desc.decode_r16(u16::from_le_bytes([c[0], c[1]])))
            .collect(),
    }
}

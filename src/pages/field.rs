//! One named field of a document: a sparse set of GPU pages in one format. The field ties its
//! parts together and keeps their promises to each other:
//!
//! * **Sparse.** A page that was never written holds no memory and reads as the field's flat
//!   value.
//! * **Versions** ([`Versions`]): an edit asks for new versions of the pages it touches
//!   ([`Field::begin_versions`]); each starts as a copy of the current version (or the flat
//!   value), the editor writes them while they are the *working* versions (shown, not yet
//!   committed), and [`Field::commit_versions`] makes them current and records the replaced
//!   versions as one undo step. Untouched pages stay shared between versions.
//! * **Places** ([`Residency`]): versions live on the GPU, in host memory or on disk under the
//!   field's budgets; whoever reads a version on the GPU asks for it first
//!   ([`Field::ensure_working`], [`Field::bring_in`]).
//! * **Changes** ([`ChangeLog`]): every change of what a page shows bumps the field's epoch and
//!   stamps the page; a reader (the renderer) keeps the epoch it has seen and asks what changed
//!   since ([`ChangeLog::changed_since`]), so any number of readers can follow one field
//!   through `&`.
//! * **The coarse level** ([`CoarseLevel`]), made on first use and kept up to date with the
//!   changes; rectangles are read, written and edited on the GPU by [`super::rects`].

use super::changes::ChangeLog;
use super::coarse::CoarseLevel;
use super::disk::DiskLoc;
use super::error::{PageError, Result};
use super::geometry::{decode, encode, DocumentDesc, HeightFormat, PageId, Rect, NEIGHBOURHOOD};
use super::page::GpuPage;
use super::residency::{Budgets, Residency, Version};
use super::versions::Versions;
use crate::gpu::{vk, Access, Buffer, BufferDesc, Gpu, GpuTimer, Image, Recorder};
use std::rc::Rc;
use std::sync::Arc;

/// Pages uploaded or read back per batch.
pub(super) const PAGES_PER_TRANSFER: usize = 64;

/// A named sparse field of page versions.
pub struct Field {
    gpu: Arc<Gpu>,
    desc: DocumentDesc,
    flat: f32,
    versions: Versions,
    places: Residency,
    /// The coarse level, made when first read (None before, and for documents past its largest
    /// size).
    coarse: Option<CoarseLevel>,
    /// Whether the coarse level reduces only the pages that hold values, the blocks of flat
    /// pages being the owner's to write ([`Self::own_flat_blocks`]).
    flat_blocks_owned: bool,
    log: ChangeLog,
}

impl Field {
    /// A derived r32f field over this field's grid (lighting, maps), reading `flat` where it
    /// has no page, under this field's memory budgets and frames in flight; with `old` (the
    /// field it replaces) its readers' epochs carry on and every page reads as changed.
    pub fn derived(&self, flat: f32, old: Option<&Field>) -> Result<Self> {
        let desc = DocumentDesc {
            format: HeightFormat::R32f,
            ..self.desc
        };
        let mut f = Field::new(&self.gpu, desc, flat)?;
        f.set_budgets(self.places.budgets().clone());
        f.set_frames_in_flight(self.places.detached);
        if let Some(old) = old {
            f.succeed(old);
        }
        Ok(f)
    }

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
            flat_blocks_owned: false,
            gpu: gpu.clone(),
            desc,
            flat,
            versions: Versions::new(),
            places,
            log: ChangeLog::default(),
        })
    }

    /// A field holding `heights` (row-major, width x height) in every page, under `budgets`.
    pub fn from_heights(
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
            f.versions.pages.insert(id, v);
        }
        let ids: Vec<PageId> = f.versions.pages.keys().copied().collect();
        match coarse {
            // The stored level is the pages' already: readers follow, nothing is reduced.
            Some(texels) => {
                f.coarse = CoarseLevel::from_texels(gpu, desc, texels)?;
                f.log.moved(ids);
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
                self.versions.pages.insert(id, v.clone());
                batch.push((id, v));
            }
            // Onto the GPU as far as half the budget allows; the rest waits in host memory (or
            // on disk past the host budget) until needed.
            let room = self.places.budgets().gpu.map_or(u64::MAX, |b| b / 2);
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

    /// The field's page versions: committed, working and the undo history.
    pub fn versions(&self) -> &Versions {
        &self.versions
    }

    /// Where the field's page versions live, under which budgets.
    pub fn places(&self) -> &Residency {
        &self.places
    }

    /// Which pages changed when.
    pub fn changes(&self) -> &ChangeLog {
        &self.log
    }

    /// Starts an edit of `ids` ([`Versions`]: each page gets a working version; with `join`
    /// a page the last undo step already replaced is written in place). Readers see the
    /// working versions from now on.
    pub fn begin_versions(&mut self, ids: Vec<PageId>, join: bool) {
        self.versions.begin(ids.clone(), join, &mut self.places);
        self.log.moved(ids);
    }

    /// Makes the working versions current; the versions they replace become one undo step
    /// (with `join`, part of the last step).
    pub fn commit_versions(&mut self, join: bool) {
        self.versions.commit(join);
    }

    /// The value of pages that hold no memory.
    pub fn flat(&self) -> f32 {
        self.flat
    }

    /// Sets the memory budgets of the field's pages (met at the next `ensure_*`).
    pub fn set_budgets(&mut self, budgets: Budgets) {
        self.places.set_budgets(budgets);
    }

    /// Value at texel (x, y) of the committed field, clamped into the document (one texel read
    /// back, or its page read from host memory or disk).
    pub fn height_at(&self, x: i32, y: i32) -> Result<f32> {
        let (x, y) = self.desc.clamp_texel(x, y);
        let id = PageId {
            x: x as u32 / self.desc.page_size,
            y: y as u32 / self.desc.page_size,
        };
        let Some(v) = self.versions.pages.get(&id) else {
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

    /// Working version `i`'s GPU page, if it is on the GPU now.
    pub fn working_page(&self, i: usize) -> Option<&GpuPage> {
        let (_, versions) = self.versions.working();
        self.places.gpu_page(versions.get(i)?)
    }

    /// Brings working versions `indices` and the committed versions of `neighbours` (pages the
    /// wave reads; working ones and flat ones are skipped) onto the GPU. With `timer`, returns
    /// the GPU time of the transfers. With frames in flight, then starts reading the saved pages
    /// around them ahead of need.
    pub fn ensure_working(
        &mut self,
        indices: &[usize],
        neighbours: &[PageId],
        timer: Option<&GpuTimer>,
    ) -> Result<f64> {
        let (ids, versions) = self.versions.working();
        if versions.is_empty() {
            return Ok(0.0);
        }
        let mut pins: Vec<Rc<Version>> = indices.iter().map(|&i| versions[i].clone()).collect();
        let mut wave: Vec<PageId> = indices.iter().map(|&i| ids[i]).collect();
        for id in neighbours {
            if !ids.contains(id) {
                pins.extend(self.versions.pages.get(id).cloned());
                wave.push(*id);
            }
        }
        let ns = ensure(
            &mut self.places,
            &self.versions,
            &mut self.log,
            &pins,
            timer,
        )?;
        if self.places.detached {
            self.read_ahead_around(&wave);
        }
        Ok(ns)
    }

    /// Starts reading, off the frame's thread, the saved pages next to `pages` (a stroke's next
    /// waves likely reach them), so their page-ins copy from host memory instead of reading the
    /// file ([`Residency::read_ahead`]).
    fn read_ahead_around(&mut self, pages: &[PageId]) {
        let ring: std::collections::BTreeSet<PageId> = pages
            .iter()
            .flat_map(|&p| self.desc.neighbourhood(p))
            .collect();
        let versions: Vec<Rc<Version>> = ring
            .iter()
            .filter_map(|&id| self.versions.visible(id).cloned())
            .collect();
        let refs: Vec<&Version> = versions.iter().map(|v| &**v).collect();
        self.places.read_ahead(&refs);
    }

    /// The image holding page `id`'s values as they should be shown now: its working version if
    /// an edit is under way there, else the committed one; None for a flat page, or one not on
    /// the GPU (renderers draw such pages coarse and ask for them: [`Self::bring_in`]).
    pub fn visible_image(&self, id: PageId) -> Option<&Image> {
        let v = self.versions.visible(id)?;
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
        self.log.values(&ids, &whole);
        self.log.moved(ids);
    }

    /// Notes that pages `ids` show new images whose values changed only inside the page-local
    /// `rects` (readers follow the pages; the coarse level reduces those rectangles).
    pub fn mark_changed_in(&mut self, ids: Vec<PageId>, rects: &[(PageId, Rect)]) {
        if let Some(c) = &mut self.coarse {
            c.note_rects(rects);
        }
        self.log.values(&ids, rects);
        self.log.moved(ids);
    }

    /// The coarse level as it is (call [`Self::refresh_coarse`] first for the latest values);
    /// None before its first refresh and past its largest size.
    pub fn coarse_level(&self) -> Option<&CoarseLevel> {
        self.coarse.as_ref()
    }

    /// The coarse level's image, made if need be (None past its largest size), whose blocks
    /// over flat pages are from now on the owner's to write: the level reduces only the pages
    /// that hold values (the lighting: its far level where a page is not lit at full
    /// resolution, [`crate::render::lighting`]). Those blocks' values are undefined until the
    /// owner writes them; after each write, [`Self::wrote_flat_blocks`]. The pyramid above the
    /// level is not kept.
    pub fn own_flat_blocks(&mut self) -> Result<Option<&Image>> {
        if self.coarse.is_none() {
            self.coarse = CoarseLevel::new(&self.gpu, self.desc)?;
        }
        self.flat_blocks_owned = true;
        Ok(self.coarse.as_ref().map(CoarseLevel::image))
    }

    /// Notes that the owner wrote the coarse level's texels `rect` (coarse texels, all of them):
    /// the pages holding values under them are reduced again at the next refresh, and readers
    /// draw again (a new epoch).
    pub fn wrote_flat_blocks(&mut self, rect: Rect) {
        let f = super::coarse::FACTOR as i32;
        let texels = Rect::new(rect.x0 * f, rect.y0 * f, rect.x1 * f, rect.y1 * f).intersect(
            &Rect::new(0, 0, self.desc.width as i32, self.desc.height as i32),
        );
        if let Some(c) = &mut self.coarse {
            c.note(self.desc.pages_in(&texels));
        }
        self.log.moved([]);
    }

    /// The coarse level, brought up to date with every change (None for documents past its
    /// largest size).
    pub fn coarse(&mut self) -> Result<Option<&CoarseLevel>> {
        self.refresh_coarse()?;
        Ok(self.coarse.as_ref())
    }

    /// With frames in flight, the submissions that make page versions (uploads from host memory
    /// or disk, copies and clears for copy-on-write) are not waited for, image pairs are made
    /// ahead on a thread, and the saved pages around a wave's are read ahead
    /// ([`Residency::detached`], [`Self::ensure_working`]).
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
        if self.flat_blocks_owned {
            // Flat pages' blocks are the owner's: only pages holding values are reduced.
            let versions = &self.versions;
            coarse.keep_pending(|id| versions.visible(id).is_some());
        }
        let result = coarse.refresh_from(&self.desc, self.flat, &self.versions, &self.places);
        self.coarse = Some(coarse);
        result
    }

    /// Whether page `id` can be drawn now: flat (no memory: it reads as [`Self::flat`]), or its
    /// visible version on the GPU.
    pub fn drawable(&self, id: PageId) -> bool {
        self.versions
            .visible(id)
            .map_or(true, |v| self.places.gpu_page(v).is_some())
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
                .filter_map(|&id| self.versions.visible(id).cloned())
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
        if let Some(budget) = self.places.budgets().gpu {
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
            match ensure(&mut self.places, &self.versions, &mut self.log, &pins, None) {
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
            .filter_map(|&id| self.versions.visible(id).cloned())
            .collect();
        ensure(&mut self.places, &self.versions, &mut self.log, &pins, None).map(|_| ())
    }

    /// For a derived field (one that keeps no undo steps: a composite, a cache): gives each of
    /// `ids` a committed version on the GPU for its writer to overwrite whole, in place (a page
    /// that was flat gets a new version holding the flat value until then). The writer then
    /// calls [`Self::mark_changed`].
    pub fn overwrite_pages(&mut self, ids: &[PageId]) -> Result<()> {
        debug_assert!(!self.versions.editing(), "a derived field is never edited");
        for &id in ids {
            if !self.versions.pages.contains_key(&id) {
                let v = self.places.pending(id, None);
                self.versions.pages.insert(id, v);
            }
        }
        let pins: Vec<Rc<Version>> = ids
            .iter()
            .map(|id| self.versions.pages[id].clone())
            .collect();
        ensure(&mut self.places, &self.versions, &mut self.log, &pins, None)?;
        for id in ids {
            let v = &self.versions.pages[id];
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
        self.log.continue_from(&old.log);
        let all: Vec<PageId> = self.desc.page_ids().collect();
        self.mark_changed(all);
    }

    /// Brings the committed versions of pages `ids` (flat pages have none) onto the GPU.
    pub fn ensure_committed(&mut self, ids: &[PageId]) -> Result<()> {
        let pins: Vec<Rc<Version>> = ids
            .iter()
            .filter_map(|id| self.versions.pages.get(id).cloned())
            .collect();
        ensure(&mut self.places, &self.versions, &mut self.log, &pins, None).map(|_| ())
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

    /// Drops pages `ids` of a derived field: they read as the flat value again.
    pub fn drop_pages(&mut self, ids: &[PageId]) {
        debug_assert!(!self.versions.editing(), "a derived field is never edited");
        for id in ids {
            self.versions.pages.remove(id);
        }
        self.mark_changed(ids.iter().copied());
    }

    /// Undoes the last step; false if there is none. No edit may be under way.
    pub fn undo(&mut self) -> bool {
        let (done, swapped) = self.versions.undo();
        self.mark_changed(swapped);
        done
    }

    /// Forgets the last undone step: it can no longer be redone.
    pub fn forget_redo(&mut self) {
        self.versions.forget_redo();
    }

    /// Redoes the last undone step; false if there is none. No edit may be under way.
    pub fn redo(&mut self) -> bool {
        let (done, swapped) = self.versions.redo();
        self.mark_changed(swapped);
        done
    }

    /// Bounds the memory undo steps hold; the oldest steps are forgotten past it.
    pub fn set_undo_budget(&mut self, bytes: u64) {
        self.versions.set_undo_budget(bytes);
    }

    /// The stored bytes of `versions` (texels as the images hold them), wherever they live.
    pub fn read_bytes(&self, versions: &[&Version]) -> Result<Vec<Vec<u8>>> {
        let mut out = Vec::with_capacity(versions.len());
        for chunk in versions.chunks(PAGES_PER_TRANSFER) {
            out.extend(self.places.read(chunk)?);
        }
        Ok(out)
    }

    /// Records that `v`'s bytes lie at `loc` of the project just saved.
    pub fn set_saved(&mut self, v: &Version, loc: DiskLoc) {
        self.places.set_saved(v, loc);
    }

    /// The committed field, row-major.
    pub fn to_dense(&self) -> Result<Vec<f32>> {
        let d = self.desc;
        let mut out = vec![self.flat; d.width as usize * d.height as usize];
        self.for_each_page_bytes(|id, _, bytes| {
            let heights = decode(&d, &bytes);
            d.page_into_dense(&heights, id, &mut out);
            Ok(())
        })?;
        Ok(out)
    }

    /// The values of every committed page that is not flat, in page order; pages not listed
    /// are flat.
    pub fn page_heights(&self) -> Result<Vec<(PageId, Vec<f32>)>> {
        let mut out = Vec::with_capacity(self.versions.pages.len());
        self.for_each_page_bytes(|id, _, bytes| {
            out.push((id, decode(&self.desc, &bytes)));
            Ok(())
        })?;
        Ok(out)
    }

    /// Calls `f` with the stored bytes (texels as the images hold them) of every committed page
    /// that is not flat and its version, in page order, a batch at a time.
    pub fn for_each_page_bytes(
        &self,
        mut f: impl FnMut(PageId, &Rc<Version>, Vec<u8>) -> Result<()>,
    ) -> Result<()> {
        let entries: Vec<(&PageId, &Rc<Version>)> = self.versions.pages.iter().collect();
        for chunk in entries.chunks(PAGES_PER_TRANSFER) {
            let versions: Vec<&Version> = chunk.iter().map(|(_, v)| &***v).collect();
            for ((id, v), bytes) in chunk.iter().zip(self.places.read(&versions)?) {
                f(**id, v, bytes)?;
            }
        }
        Ok(())
    }
}

/// Brings `pins` onto the GPU (`places`, under its budgets); the shown versions among those
/// that moved count as changed in `log` (readers bound their images). With `timer`, returns the
/// GPU time of the transfers.
fn ensure(
    places: &mut Residency,
    versions: &Versions,
    log: &mut ChangeLog,
    pins: &[Rc<Version>],
    timer: Option<&GpuTimer>,
) -> Result<f64> {
    let refs: Vec<&Version> = pins.iter().map(|v| &**v).collect();
    let (moved, ns) = places.ensure(&refs, timer)?;
    // Readers bound the images of visible versions that moved: they changed for them. Each
    // moved version's page is looked up alone (not every page's visible version, which cost
    // about a millisecond a stroke in a 65536² world).
    let ids: Vec<PageId> = moved
        .iter()
        .filter_map(|&k| {
            let id = places.page_of(k)?;
            (versions.visible(id)?.key() == k).then_some(id)
        })
        .collect();
    if !ids.is_empty() {
        log.moved(ids);
    }
    Ok(ns)
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

/// The visible images of the nine pages around `id` of `field` ([`NEIGHBOURHOOD`]'s order),
/// `dummy` where a page is off the document or holds no memory, and a bit per slot that has one.
pub fn neighbourhood<'a>(field: &'a Field, id: PageId, dummy: &'a Image) -> (Vec<&'a Image>, u32) {
    let mut present = 0;
    let images = NEIGHBOURHOOD
        .into_iter()
        .enumerate()
        .map(|(slot, (dx, dy))| {
            let image = field
                .desc()
                .neighbour(id, dx, dy)
                .and_then(|n| field.visible_image(n));
            if image.is_some() {
                present |= 1 << slot;
            }
            image.unwrap_or(dummy)
        })
        .collect();
    (images, present)
}

/// Why a page of `field` has no GPU image: the GPU budget holds less than its versions.
pub fn budget_too_small(field: &Field) -> PageError {
    PageError::BudgetTooSmall {
        needed: field.versions().bytes(),
        budget: field.places().budgets().gpu.unwrap_or(0),
    }
}

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
//! * **Changes.** Every change of what a page shows bumps the field's epoch and stamps the page;
//!   a reader (the renderer) keeps the epoch it has seen and asks what changed since
//!   ([`Field::changed_since`]), so any number of readers can follow one field through `&`.

use super::error::{PageError, Result};
use super::geometry::{DocumentDesc, HeightFormat, PageId, Rect};
use super::history::{History, DEFAULT_UNDO_BUDGET};
use super::page::GpuPage;
use crate::gpu::{vk, Access, Buffer, BufferDesc, Gpu, Image, ImageDesc, Recorder};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

/// Pages uploaded or read back per submission.
const PAGES_PER_TRANSFER: usize = 64;

/// New versions of the pages an edit touches, written before they are committed.
struct Working {
    ids: Vec<PageId>,
    pages: Vec<GpuPage>,
    /// Per page: whether it must first be filled from the current version (false: it is the
    /// current version itself, taken over by a continuation of the last step).
    needs_copy: Vec<bool>,
}

/// A named sparse field of GPU pages.
pub struct Field {
    gpu: Arc<Gpu>,
    desc: DocumentDesc,
    flat: f32,
    pages: BTreeMap<PageId, Rc<GpuPage>>,
    history: History<Rc<GpuPage>>,
    working: Option<Working>,
    /// Epoch of each page's last visible change.
    changes: BTreeMap<PageId, u64>,
    epoch: u64,
}

impl Field {
    /// A flat field at value `flat` (quantized to the format).
    pub fn new(gpu: &Arc<Gpu>, desc: DocumentDesc, flat: f32) -> Result<Self> {
        desc.validate().map_err(PageError::Document)?;
        if desc.format == HeightFormat::R16 && !gpu.supports_storage_format(vk::Format::R16_UNORM) {
            return Err(PageError::NoR16Storage {
                device: gpu.info().name.clone(),
            });
        }
        Ok(Self {
            gpu: gpu.clone(),
            desc,
            flat: desc.quantize(flat),
            pages: BTreeMap::new(),
            history: History::new(|p: &Rc<GpuPage>| p.bytes(), DEFAULT_UNDO_BUDGET),
            working: None,
            changes: BTreeMap::new(),
            epoch: 0,
        })
    }

    /// A field holding `heights` (row-major, width x height) in every page.
    pub fn from_heights(gpu: &Arc<Gpu>, desc: DocumentDesc, heights: &[f32]) -> Result<Self> {
        if heights.len() != desc.width as usize * desc.height as usize {
            return Err(PageError::WrongSize);
        }
        let mut f = Self::new(gpu, desc, 0.0)?;
        let ids: Vec<PageId> = (0..desc.pages_y())
            .flat_map(|y| (0..desc.pages_x()).map(move |x| PageId { x, y }))
            .collect();
        f.upload_pages(
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
        let texels = |id: PageId| {
            let r = desc.page_rect(id);
            r.width() as usize * r.height() as usize
        };
        f.upload_pages(pages.iter().map(|(id, heights)| {
            let fits = id.x < desc.pages_x() && id.y < desc.pages_y();
            if !fits || heights.len() != texels(*id) {
                return Err(PageError::PageOutside { x: id.x, y: id.y });
            }
            Ok((*id, heights.clone()))
        }))?;
        Ok(f)
    }

    /// Gives the listed pages new (unrecorded) versions holding the given values.
    fn upload_pages(
        &mut self,
        pages: impl Iterator<Item = Result<(PageId, Vec<f32>)>>,
    ) -> Result<()> {
        let gpu = self.gpu.clone();
        let mut pages = pages.peekable();
        while pages.peek().is_some() {
            let mut uploads = Vec::new();
            let mut made = Vec::new();
            for item in pages.by_ref().take(PAGES_PER_TRANSFER) {
                let (id, heights) = item?;
                let bytes = self.encode(&heights);
                let mut up =
                    Buffer::new(&gpu, "page upload", BufferDesc::upload(bytes.len() as u64))?;
                up.write(&bytes)?;
                uploads.push(up);
                made.push((id, self.new_page(id)?));
            }
            let mut rec = Recorder::new(&gpu)?;
            for (up, (_, page)) in uploads.iter().zip(&made) {
                rec.buffer(up, Access::HostWrite);
                rec.copy_buffer_to_image(up, page.front());
            }
            rec.submit_and_wait()?;
            let ids: Vec<PageId> = made.iter().map(|(id, _)| *id).collect();
            for (id, page) in made {
                self.pages.insert(id, Rc::new(page));
            }
            self.mark_changed(ids);
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

    /// Pages that hold GPU memory now.
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }

    /// GPU bytes of the current pages' images (history versions not included).
    pub fn page_bytes(&self) -> u64 {
        self.pages
            .keys()
            .map(|id| self.page_texels(*id) * self.desc.texel_bytes() * 2)
            .sum()
    }

    fn page_texels(&self, id: PageId) -> u64 {
        let r = self.desc.page_rect(id);
        r.width() as u64 * r.height() as u64
    }

    fn image_format(&self) -> vk::Format {
        match self.desc.format {
            HeightFormat::R32f => vk::Format::R32_SFLOAT,
            HeightFormat::R16 => vk::Format::R16_UNORM,
        }
    }

    /// The value an image of this field's format holds for (quantized) height `h`.
    pub fn stored_value(&self, h: f32) -> f32 {
        match self.desc.format {
            HeightFormat::R32f => h,
            HeightFormat::R16 => f32::from(self.desc.encode_r16(h)) / 65535.0,
        }
    }

    /// Heights as the page images store them, tightly packed.
    fn encode(&self, heights: &[f32]) -> Vec<u8> {
        match self.desc.format {
            HeightFormat::R32f => heights.iter().flat_map(|h| h.to_le_bytes()).collect(),
            HeightFormat::R16 => heights
                .iter()
                .flat_map(|&h| self.desc.encode_r16(h).to_le_bytes())
                .collect(),
        }
    }

    /// Heights from tightly packed page texels.
    fn decode(&self, bytes: &[u8]) -> Vec<f32> {
        match self.desc.format {
            HeightFormat::R32f => bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            HeightFormat::R16 => bytes
                .chunks_exact(2)
                .map(|c| self.desc.decode_r16(u16::from_le_bytes([c[0], c[1]])))
                .collect(),
        }
    }

    /// The committed version of a page, if it holds memory (for identity checks and reads).
    pub fn page(&self, id: PageId) -> Option<&Rc<GpuPage>> {
        self.pages.get(&id)
    }

    /// A new version of page `id`, both images undefined.
    fn new_page(&self, id: PageId) -> Result<GpuPage> {
        let r = self.desc.page_rect(id);
        let desc = ImageDesc::new_2d(self.image_format(), [r.width() as u32, r.height() as u32])
            .usage(
                vk::ImageUsageFlags::STORAGE
                    | vk::ImageUsageFlags::TRANSFER_SRC
                    | vk::ImageUsageFlags::TRANSFER_DST,
            );
        let name = format!("page {},{}", id.x, id.y);
        let images = [
            Image::new(&self.gpu, &name, desc)?,
            Image::new(&self.gpu, &name, desc)?,
        ];
        Ok(GpuPage::new(images, Rect::new(0, 0, r.width(), r.height())))
    }

    /// Value at texel (x, y) of the committed field, clamped into the document (one texel read
    /// back).
    pub fn height_at(&self, x: i32, y: i32) -> Result<f32> {
        let (x, y) = self.desc.clamp_texel(x, y);
        let id = PageId {
            x: x as u32 / self.desc.page_size,
            y: y as u32 / self.desc.page_size,
        };
        let Some(page) = self.pages.get(&id) else {
            return Ok(self.flat);
        };
        let r = self.desc.page_rect(id);
        let texel = self.desc.texel_bytes();
        let readback = Buffer::new(&self.gpu, "texel readback", BufferDesc::readback(texel))?;
        let mut rec = Recorder::new(&self.gpu)?;
        rec.copy_image_region_to_buffer(page.front(), [x - r.x0, y - r.y0], [1, 1], &readback, 0);
        rec.buffer(&readback, Access::HostRead);
        rec.submit_and_wait()?;
        Ok(self.decode(readback.mapped(texel as usize)?)[0])
    }

    /// Starts an edit of `ids`: each gets a working version. With `join` (the edit continues
    /// the last undo step) a page that step already replaced is taken over and written in place;
    /// the others need [`Self::record_version_copies`] before they are written.
    pub fn begin_versions(&mut self, ids: Vec<PageId>, join: bool) -> Result<()> {
        debug_assert!(self.working.is_none(), "an edit is already under way");
        let mut pages = Vec::with_capacity(ids.len());
        let mut needs_copy = vec![true; ids.len()];
        for (k, &id) in ids.iter().enumerate() {
            if join && self.history.last_step_holds(id) {
                if let Some(rc) = self.pages.remove(&id) {
                    match Rc::try_unwrap(rc) {
                        Ok(page) => {
                            pages.push(page);
                            needs_copy[k] = false;
                            continue;
                        }
                        Err(rc) => {
                            self.pages.insert(id, rc);
                        }
                    }
                }
            }
            pages.push(self.new_page(id)?);
        }
        self.working = Some(Working {
            ids,
            pages,
            needs_copy,
        });
        Ok(())
    }

    /// Records filling both images of each new working version from the current version (or
    /// the flat value), so the first write of a version need only cover its own rectangle.
    pub fn record_version_copies<'a>(&'a self, rec: &mut Recorder<'a>) {
        let Some(w) = &self.working else { return };
        for ((id, page), _) in w
            .ids
            .iter()
            .zip(&w.pages)
            .zip(&w.needs_copy)
            .filter(|(_, &c)| c)
        {
            for image in &page.images {
                match self.pages.get(id) {
                    Some(old) => rec.copy_image(old.front(), image),
                    None => rec.clear_image(image, self.stored_value(self.flat)),
                }
            }
            page.set_stale(Rect::EMPTY);
        }
    }

    /// The working versions (ids and pages, in the order given to [`Self::begin_versions`]).
    pub fn working(&self) -> (&[PageId], &[GpuPage]) {
        match &self.working {
            Some(w) => (&w.ids, &w.pages),
            None => (&[], &[]),
        }
    }

    /// Makes the working versions current; the versions they replace become one undo step
    /// (with `join`, part of the last step).
    pub fn commit_versions(&mut self, join: bool) {
        let Some(w) = self.working.take() else { return };
        let previous = w
            .ids
            .iter()
            .zip(w.pages)
            .map(|(&id, page)| (id, self.pages.insert(id, Rc::new(page))))
            .collect();
        if join {
            self.history.record_joined(previous);
        } else {
            self.history.record(previous);
        }
    }

    /// The image holding page `id`'s values as they should be shown now: its working version if
    /// an edit is under way there, else the committed one; None for a page that holds no memory.
    pub fn visible_image(&self, id: PageId) -> Option<&Image> {
        if let Some(w) = &self.working {
            if let Some(i) = w.ids.iter().position(|&p| p == id) {
                return Some(w.pages[i].front());
            }
        }
        self.pages.get(&id).map(|p| p.front())
    }

    /// Notes that what the listed pages show changed.
    pub fn mark_changed(&mut self, ids: impl IntoIterator<Item = PageId>) {
        self.epoch += 1;
        for id in ids {
            self.changes.insert(id, self.epoch);
        }
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

    fn versions(&self) -> BTreeMap<PageId, *const GpuPage> {
        self.pages
            .iter()
            .map(|(&id, p)| (id, Rc::as_ptr(p)))
            .collect()
    }

    /// Marks every page whose version differs from `before` as changed.
    fn mark_swapped(&mut self, before: BTreeMap<PageId, *const GpuPage>) {
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

    /// Bounds the GPU memory undo steps hold; the oldest steps are forgotten past it.
    pub fn set_undo_budget(&mut self, bytes: u64) {
        self.history.set_budget(bytes);
    }

    /// GPU memory the undo/redo steps hold (upper bound).
    pub fn undo_bytes(&self) -> u64 {
        self.history.held_bytes()
    }

    /// Steps that can be undone now.
    pub fn undo_steps(&self) -> usize {
        self.history.can_undo()
    }

    /// The committed field, row-major (read back from the pages' front images).
    pub fn to_dense(&self) -> Result<Vec<f32>> {
        let d = self.desc;
        let mut out = vec![self.flat; d.width as usize * d.height as usize];
        for (id, heights) in self.page_heights()? {
            d.page_into_dense(&heights, id, &mut out);
        }
        Ok(out)
    }

    /// The values of every committed page that holds memory, in page order; pages not listed
    /// are flat.
    pub fn page_heights(&self) -> Result<Vec<(PageId, Vec<f32>)>> {
        let texel = self.desc.texel_bytes();
        let mut out = Vec::with_capacity(self.pages.len());
        let entries: Vec<(&PageId, &Rc<GpuPage>)> = self.pages.iter().collect();
        for chunk in entries.chunks(PAGES_PER_TRANSFER) {
            let bytes: u64 = chunk
                .iter()
                .map(|(id, _)| self.page_texels(**id) * texel)
                .sum();
            let readback = Buffer::new(&self.gpu, "pages readback", BufferDesc::readback(bytes))?;
            let mut rec = Recorder::new(&self.gpu)?;
            let mut offset = 0;
            for (id, page) in chunk {
                rec.copy_image_to_buffer_at(page.front(), &readback, offset);
                offset += self.page_texels(**id) * texel;
            }
            rec.buffer(&readback, Access::HostRead);
            rec.submit_and_wait()?;
            let data = self.decode(readback.mapped(bytes as usize)?);
            let mut at = 0usize;
            for (id, _) in chunk {
                let n = self.page_texels(**id) as usize;
                out.push((**id, data[at..at + n].to_vec()));
                at += n;
            }
        }
        Ok(out)
    }
}

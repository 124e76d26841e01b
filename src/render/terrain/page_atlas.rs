//! A page atlas: a field's pages that a frame draws at page level, copied side by side into one
//! image, and a table giving, per page of the document, where its values are (a slot of the
//! atlas, the field's flat value, or the field's coarse level). The shading pass reads a
//! field's value under any pixel through these two bindings: the field's pages are separate
//! images and the devices we test on have no descriptor indexing. Four fields are read so: the
//! lighting (sun visibility and occlusion), the rivers' water, the heights (normals and
//! curvature per pixel, r32f documents) and the overlay tinting the terrain.
//!
//! A page keeps its slot while no other page needs it (least recently wanted first out); a slot
//! is copied again when the field marks its page changed. The atlas grows (all slots copied
//! again) until it holds what a frame wants or reaches its most bytes
//! ([`super::RenderOptions::atlas_bytes`], for each atlas, its mip levels included); pages past
//! that are shaded from the coarse level.

use super::atlas_mips::{AtlasMips, Texels};
use crate::gpu::{vk, Gpu, Image, ImageDesc, Recorder, Result};
use crate::pages::geometry::{DocumentDesc, PageId};
use crate::pages::{Field, PageStore};
use crate::shared_constants::{ATLAS_COARSE, ATLAS_FLAT};
use std::collections::HashMap;
use std::sync::Arc;

/// Most bytes an atlas holds unless told otherwise (each of them): 512 pages of 512² with their
/// mip levels in the lighting's and the heights' atlases, 768 in the rivers' and the overlay's,
/// which keep none (a 1080p view of an 8192² document drawn at page level throughout wants
/// about 260). An atlas grows only as far as a frame wants: the rivers' only as far as pages
/// with water are drawn.
pub const DEFAULT_BYTES: u64 = 768 << 20;

pub(crate) struct PageAtlas {
    label: &'static str,
    gpu: Arc<Gpu>,
    desc: DocumentDesc,
    max_bytes: u64,
    image: Image,
    cols: u32,
    rows: u32,
    /// Per slot: the page it holds and the last frame that wanted it.
    slots: Vec<Option<(PageId, u64)>>,
    slot_of: HashMap<PageId, usize>,
    /// Slots to copy from their pages before the next shading, and whether a frame recorded
    /// them (then the next update starts a new list).
    copies: Vec<usize>,
    copies_recorded: std::cell::Cell<bool>,
    /// Per page of the document: a slot, [`ATLAS_FLAT`] or [`ATLAS_COARSE`].
    table: Vec<i32>,
    /// Counts the table's changes (frame slots rewrite their copy when it moved).
    generation: u64,
    /// The field's change epoch caught up with.
    seen: u64,
    /// Mip levels of the slots (the heights' and the lighting's atlases: what the shading pass
    /// reads filtered where a pixel spans several texels), if kept.
    mips: Option<AtlasMips>,
}

impl PageAtlas {
    /// An atlas (its image named `label`) of at most `max_bytes` (at least one page) for
    /// documents like `desc`.
    pub fn new(
        gpu: &Arc<Gpu>,
        desc: DocumentDesc,
        max_bytes: u64,
        label: &'static str,
    ) -> Result<Self> {
        Ok(Self {
            label,
            gpu: gpu.clone(),
            desc,
            max_bytes,
            image: atlas_image(gpu, label, &desc, 1, 1)?,
            cols: 1,
            rows: 1,
            slots: vec![None],
            slot_of: HashMap::new(),
            copies: Vec::new(),
            copies_recorded: std::cell::Cell::new(false),
            table: vec![ATLAS_COARSE; (desc.pages_x() * desc.pages_y()) as usize],
            generation: 1,
            seen: 0,
            mips: None,
        })
    }

    /// Keeps mip levels of every slot, whose values are `texels`, from now on ([`AtlasMips`]).
    pub fn keep_mips(&mut self, texels: Texels) -> Result<()> {
        let mips = AtlasMips::new(
            &self.gpu,
            self.label,
            self.desc.page_size,
            texels,
            &self.image,
            self.cols,
            self.rows,
        )?;
        self.mips = Some(mips);
        Ok(())
    }

    /// The slots' mip levels, if kept.
    pub fn mips(&self) -> Option<&AtlasMips> {
        self.mips.as_ref()
    }

    /// Level `level` of page `id`'s slot, row-major, `page_size >> level` a side: 0 the slot
    /// itself, 1 and up its mip levels, if kept (read back, waited for; for tests and tools).
    /// None while the page holds no slot.
    pub fn read_level(&self, id: PageId, level: u32) -> Result<Option<Vec<f32>>> {
        let Some(&slot) = self.slot_of.get(&id) else {
            return Ok(None);
        };
        if level > 0 {
            let mips = self.mips.as_ref().ok_or_else(|| {
                crate::gpu::GpuError::usage(format!("{}: no mip levels kept", self.label))
            })?;
            return mips.read(slot, self.cols, level).map(Some);
        }
        let ps = self.desc.page_size;
        let at = [
            (slot as u32 % self.cols) * ps,
            (slot as u32 / self.cols) * ps,
        ];
        super::atlas_mips::read_region(&self.gpu, &self.image, at, ps).map(Some)
    }

    pub fn image(&self) -> &Image {
        &self.image
    }

    /// The atlas image's name.
    pub fn label(&self) -> &'static str {
        self.label
    }

    /// Bytes of the atlas's image and of its mip levels' (what its most bytes bound).
    pub fn bytes(&self) -> u64 {
        let bytes =
            |i: &Image| 4 * u64::from(i.desc.extent.width) * u64::from(i.desc.extent.height);
        bytes(&self.image) + self.mips.as_ref().map_or(0, |m| bytes(m.image()))
    }

    /// Forgets every page it holds (its field is another now): each is copied again when
    /// wanted.
    fn forget(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = None);
        self.slot_of.clear();
        self.copies.clear();
        self.table.iter_mut().for_each(|e| *e = ATLAS_COARSE);
        self.generation += 1;
        self.seen = 0;
    }

    /// Slots per row of the atlas.
    pub fn cols(&self) -> u32 {
        self.cols
    }

    /// The table and its generation.
    pub fn table(&self) -> (&[i32], u64) {
        (&self.table, self.generation)
    }

    /// Takes frame `frame`'s pages drawn at page level (`wanted`, with the ring of pages their
    /// texels reach) and the field as it is: assigns slots, notes the copies to make
    /// and updates the table. Returns how many wanted pages found no room (shaded coarse).
    pub fn update(&mut self, field: &Field, wanted: &[PageId], frame: u64) -> Result<usize> {
        if self.copies_recorded.replace(false) {
            self.copies.clear();
        }
        let (changed, epoch) = field.changes().changed_since(self.seen);
        self.seen = epoch;
        for id in changed {
            if let Some(&slot) = self.slot_of.get(&id) {
                self.copies.push(slot);
            } else if field.versions().page(id).is_some() {
                // No longer flat (a river reached it since it was last wanted): until it is
                // wanted again, from the coarse level.
                self.set_entry(id, ATLAS_COARSE);
            }
        }
        let mut missing = Vec::new();
        for &id in wanted {
            let entry = if field.versions().page(id).is_none() {
                ATLAS_FLAT
            } else if field.visible_image(id).is_none() {
                ATLAS_COARSE
            } else if let Some(&slot) = self.slot_of.get(&id) {
                self.slots[slot] = Some((id, frame));
                slot as i32
            } else {
                missing.push(id);
                continue;
            };
            self.set_entry(id, entry);
        }
        if missing.is_empty() {
            self.finish_copies();
            return Ok(0);
        }
        let free = self.slots_free(frame);
        if free < missing.len() {
            self.grow(self.slots.len() - free + missing.len())?;
        }
        let mut no_room = 0;
        for id in missing {
            match self.take_slot(frame) {
                Some(slot) => {
                    if let Some((old, _)) = self.slots[slot] {
                        self.slot_of.remove(&old);
                        self.set_entry(old, ATLAS_COARSE);
                    }
                    self.slots[slot] = Some((id, frame));
                    self.slot_of.insert(id, slot);
                    self.copies.push(slot);
                    self.set_entry(id, slot as i32);
                }
                None => {
                    no_room += 1;
                    self.set_entry(id, ATLAS_COARSE);
                }
            }
        }
        self.finish_copies();
        Ok(no_room)
    }

    fn slots_free(&self, frame: u64) -> usize {
        self.slots
            .iter()
            .filter(|s| !s.is_some_and(|(_, f)| f >= frame))
            .count()
    }

    /// A slot no page of `frame` holds: an empty one, else the least recently wanted.
    fn take_slot(&self, frame: u64) -> Option<usize> {
        if let Some(i) = self.slots.iter().position(Option::is_none) {
            return Some(i);
        }
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.map(|(_, f)| (f, i)))
            .filter(|&(f, _)| f < frame)
            .min()
            .map(|(_, i)| i)
    }

    /// Grows the atlas to hold at least `needed` slots (as far as its most bytes and the
    /// device's largest image allow); every held slot is copied again.
    fn grow(&mut self, needed: usize) -> Result<()> {
        let ps = u64::from(self.desc.page_size);
        // Slots a row stay a power of two (the shading pass finds a slot's column and row with
        // a mask and a shift): doubled from 1, up to the largest power of two that fits.
        let fit = (u64::from(self.gpu.info().max_image_dimension_2d) / ps).max(1);
        let max_side = 1 << fit.ilog2();
        // A slot's bytes: its texels and, where kept, their mip levels.
        let slot_bytes = ps * ps * 4 + self.mips.as_ref().map_or(0, |_| AtlasMips::slot_bytes(ps));
        let max_slots = (self.max_bytes / slot_bytes).clamp(1, max_side * max_side);
        let (mut cols, mut rows) = (u64::from(self.cols), u64::from(self.rows));
        while ((cols * rows) as usize) < needed && cols * rows < max_slots {
            if cols == rows {
                cols = (cols * 2).min(max_side);
            } else {
                rows = (rows * 2).min(max_side);
            }
            if cols * rows > max_slots {
                rows = (max_slots / cols).max(1);
                break;
            }
        }
        let (cols, rows) = (cols as u32, rows as u32);
        debug_assert!(cols.is_power_of_two());
        if cols * rows <= self.cols * self.rows {
            return Ok(());
        }
        self.image = atlas_image(&self.gpu, self.label, &self.desc, cols, rows)?;
        if let Some(mips) = &mut self.mips {
            mips.resize(&self.image, cols, rows)?;
        }
        self.cols = cols;
        self.rows = rows;
        self.slots.resize((cols * rows) as usize, None);
        self.copies = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.map(|_| i))
            .collect();
        // Slot numbers stay (the table holds them): only where they lie moved, with the width.
        Ok(())
    }

    fn set_entry(&mut self, id: PageId, entry: i32) {
        let i = (id.y * self.desc.pages_x() + id.x) as usize;
        if self.table[i] != entry {
            self.table[i] = entry;
            self.generation += 1;
        }
    }

    fn finish_copies(&mut self) {
        self.copies.sort_unstable();
        self.copies.dedup();
    }

    /// Records the copies noted by [`Self::update`] from `field`'s pages into their slots,
    /// and their mip levels where kept.
    pub fn record_copies<'a>(&'a self, rec: &mut Recorder<'a>, field: &'a Field) -> Result<()> {
        let ps = self.desc.page_size as i32;
        let mut copied = Vec::with_capacity(self.copies.len());
        for &slot in &self.copies {
            let Some((id, _)) = self.slots[slot] else {
                continue;
            };
            let Some(src) = field.visible_image(id) else {
                continue;
            };
            let r = self.desc.page_rect(id);
            let at = [
                (slot as u32 % self.cols) as i32 * ps,
                (slot as u32 / self.cols) as i32 * ps,
            ];
            let size = [r.width() as u32, r.height() as u32];
            rec.copy_image_regions(src, &self.image, &[([0, 0], at, size)]);
            copied.push(slot);
        }
        if let Some(mips) = self.mips.as_ref().filter(|_| !copied.is_empty()) {
            mips.record(rec, &self.image, self.cols, &copied)?;
        }
        // Only now: a frame that fails to record keeps the copies for the next one.
        self.copies_recorded.set(true);
        Ok(())
    }
}

/// An r32f image named `label` of `cols` x `rows` page-sized slots.
fn atlas_image(
    gpu: &Arc<Gpu>,
    label: &str,
    desc: &DocumentDesc,
    cols: u32,
    rows: u32,
) -> Result<Image> {
    let ps = desc.page_size;
    Image::new(
        gpu,
        label,
        ImageDesc::new_2d(vk::Format::R32_SFLOAT, [cols * ps, rows * ps]).usage(
            vk::ImageUsageFlags::STORAGE
                | vk::ImageUsageFlags::TRANSFER_DST
                | vk::ImageUsageFlags::TRANSFER_SRC,
        ),
    )
}

/// A field the shading pass reads through a [`PageAtlas`]: its name in the store, the atlas,
/// the image bound for its coarse level while it has none (never read then: every page is flat
/// or in the atlas), and whether the frame being prepared reads it.
pub(crate) struct ShadedField {
    pub name: String,
    pub atlas: PageAtlas,
    coarse_placeholder: Image,
    pub on: bool,
}

impl ShadedField {
    pub fn new(
        gpu: &Arc<Gpu>,
        desc: DocumentDesc,
        max_bytes: u64,
        name: &'static str,
        coarse_placeholder: Image,
    ) -> Result<Self> {
        Ok(Self {
            name: name.to_string(),
            atlas: PageAtlas::new(gpu, desc, max_bytes, name)?,
            coarse_placeholder,
            on: false,
        })
    }

    /// The field, where the frame reads it and `store` has it.
    pub fn field<'s>(&self, store: &'s PageStore) -> Option<&'s Field> {
        store.field(&self.name).filter(|_| self.on)
    }

    /// Reads field `name` from now on (none: ""): the atlas forgets the pages it held.
    pub fn follow(&mut self, name: &str) {
        if self.name != name {
            self.name = name.to_string();
            self.atlas.forget();
        }
    }

    /// The image the shading pass binds for the field's coarse level.
    pub fn coarse<'s>(&'s self, store: &'s PageStore) -> &'s Image {
        store
            .field(&self.name)
            .and_then(|f| f.coarse_level())
            .map_or(&self.coarse_placeholder, |c| c.image())
    }
}

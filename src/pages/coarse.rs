//! A field's coarse level: one texel per [`FACTOR`]² texels of the document holding the block's
//! lowest height, highest height, the sum of its heights (mean = sum / texels) and its first
//! height (the block's top-left texel: the height a vertex grid of spacing [`FACTOR`] samples
//! there, so a coarse mesh meets a finer one exactly), in one RGBA32F image that stays on the GPU
//! whatever the budgets, so far regions can be drawn and picked without their pages
//! (65536² → 1024², 16 MiB). Version-2 projects store it, so opening one reads no page.
//!
//! Above it sits its **pyramid**: levels 1, 2, … each the 2x2 reduction of the level below (the
//! same four values: lowest, highest, sum, and the top-left child's first height), down to one
//! texel for the whole document, so bounds of any square of 64·2^k texels are one texel. The
//! renderer's finest node spans 64² texels, so this is every level of the page mip chain it reads
//! bounds from; below 64 it samples the pages' own texels (the first height of a block is the
//! page texel at its corner). Refreshes reduce the rectangle of each level that the refreshed
//! pages cover.
//!
//! Edits note the page-local rectangles they wrote (undo, redo and loads whole pages);
//! [`CoarseLevel::refresh`] recomputes those blocks when the level is read
//! ([`super::Field::coarse`]; frames do not read it yet, so they pay nothing): on the GPU
//! (`pages/coarse.comp`) for pages on the GPU, only the blocks the rectangle covers, with the CPU
//! twin ([`reduce_block`], the same order of operations, so the same values) for whole pages in
//! host memory, on disk or flat.

use super::geometry::{decode, DocumentDesc, HeightFormat, PageId, Rect};
use super::residency::{Residency, Version};
use super::versions::Versions;
use crate::gpu::{
    shaders, vk, Access, BindingKind, Buffer, BufferDesc, ComputeKernel, DescriptorSet, Gpu, Image,
    ImageDesc, Recorder, Resource, Result,
};
use bytemuck::{Pod, Zeroable};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// Document texels per coarse texel, per side.
pub const FACTOR: u32 = crate::shared_constants::COARSE_FACTOR as u32;
/// Largest coarse level kept, per side (documents up to 131072² have one).
pub const MAX_SIDE: u32 = 2048;

#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct ReducePush {
    below_size: [i32; 2],
    origin: [i32; 2],
    size: [i32; 2],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct CoarsePush {
    page_size: [i32; 2],
    coarse_origin: [i32; 2],
    height_min: f32,
    height_range: f32,
    /// First block of the page to reduce (the dispatch covers the rest of the rectangle).
    block_origin: [i32; 2],
}

/// Lowest, highest, summed and first height of block (bx, by) of a page of `w` x `h` heights
/// (row-major): the CPU twin of `coarse_body.glsl`, in its order (rows left to right, then a
/// tree over the rows).
pub fn reduce_block(heights: &[f32], w: u32, h: u32, bx: u32, by: u32) -> [f32; 4] {
    let n = FACTOR as usize;
    let (x0, y0) = (bx * FACTOR, by * FACTOR);
    let (bw, bh) = (FACTOR.min(w - x0), FACTOR.min(h - y0));
    let mut lo = vec![3.4e38f32; n];
    let mut hi = vec![-3.4e38f32; n];
    let mut sum = vec![0.0f32; n];
    for r in 0..bh as usize {
        let row = (y0 as usize + r) * w as usize + x0 as usize;
        for &v in &heights[row..row + bw as usize] {
            lo[r] = lo[r].min(v);
            hi[r] = hi[r].max(v);
            sum[r] += v;
        }
    }
    let mut s = n / 2;
    while s > 0 {
        for r in 0..s {
            lo[r] = lo[r].min(lo[r + s]);
            hi[r] = hi[r].max(hi[r + s]);
            sum[r] += sum[r + s];
        }
        s /= 2;
    }
    [lo[0], hi[0], sum[0], heights[(y0 * w + x0) as usize]]
}

/// The coarse texels of page `id` holding `heights`, row-major over the page's blocks.
pub fn reduce_page(desc: &DocumentDesc, id: PageId, heights: &[f32]) -> Vec<[f32; 4]> {
    let r = desc.page_rect(id);
    let (w, h) = (r.width() as u32, r.height() as u32);
    let (bw, bh) = (w.div_ceil(FACTOR), h.div_ceil(FACTOR));
    (0..bh)
        .flat_map(|by| (0..bw).map(move |bx| (bx, by)))
        .map(|(bx, by)| reduce_block(heights, w, h, bx, by))
        .collect()
}

/// The 2x2 reduction of texel (x, y) of the level above `below` (`w` x `h`, row-major): the CPU
/// twin of `pages/coarse_reduce.comp`, in its order (sums: top row, bottom row, then both).
pub fn reduce_2x2(below: &[[f32; 4]], w: u32, h: u32, x: u32, y: u32) -> [f32; 4] {
    let at = |cx: u32, cy: u32| below[(cy * w + cx) as usize];
    let (cx, cy) = (2 * x, 2 * y);
    let (right, down) = (cx + 1 < w, cy + 1 < h);
    let a = at(cx, cy);
    let (mut lo, mut hi, mut top) = (a[0], a[1], a[2]);
    if right {
        let b = at(cx + 1, cy);
        (lo, hi, top) = (lo.min(b[0]), hi.max(b[1]), top + b[2]);
    }
    let mut sum = top;
    if down {
        let d0 = at(cx, cy + 1);
        (lo, hi) = (lo.min(d0[0]), hi.max(d0[1]));
        let mut bottom = d0[2];
        if right {
            let d1 = at(cx + 1, cy + 1);
            (lo, hi, bottom) = (lo.min(d1[0]), hi.max(d1[1]), bottom + d1[2]);
        }
        sum = top + bottom;
    }
    [lo, hi, sum, a[3]]
}

/// The level above `below` (`w` x `h`), reduced on the CPU (see [`reduce_2x2`]).
pub fn reduce_level(below: &[[f32; 4]], w: u32, h: u32) -> Vec<[f32; 4]> {
    let [aw, ah] = [w.div_ceil(2), h.div_ceil(2)];
    (0..ah)
        .flat_map(|y| (0..aw).map(move |x| (x, y)))
        .map(|(x, y)| reduce_2x2(below, w, h, x, y))
        .collect()
}

/// Sizes of the levels of the pyramid over the coarse level of `desc` (level 1 first), down to
/// one texel.
pub fn pyramid_sizes(desc: &DocumentDesc) -> Vec<[u32; 2]> {
    let mut sizes = Vec::new();
    let [mut w, mut h] = size_of(desc);
    while w > 1 || h > 1 {
        (w, h) = (w.div_ceil(2), h.div_ceil(2));
        sizes.push([w, h]);
    }
    sizes
}

/// Size of the coarse level of `desc`, per side.
pub fn size_of(desc: &DocumentDesc) -> [u32; 2] {
    [desc.width.div_ceil(FACTOR), desc.height.div_ceil(FACTOR)]
}

/// Whether documents of `desc` keep a coarse level (not past [`MAX_SIDE`]).
pub fn kept(desc: &DocumentDesc) -> bool {
    let [w, h] = size_of(desc);
    w <= MAX_SIDE && h <= MAX_SIDE
}

/// The texels of page `id` when every height is `flat`: one reduction per page size, cached in
/// `cache`.
pub fn flat_page<'a>(
    cache: &'a mut HashMap<[i32; 2], Vec<[f32; 4]>>,
    desc: &DocumentDesc,
    id: PageId,
    flat: f32,
) -> &'a [[f32; 4]] {
    let r = desc.page_rect(id);
    cache.entry([r.width(), r.height()]).or_insert_with(|| {
        let heights = vec![flat; (r.width() * r.height()) as usize];
        reduce_page(desc, id, &heights)
    })
}

/// The whole coarse level (row-major) of a document of `desc` whose every height is `flat`.
pub fn flat_level(desc: &DocumentDesc, flat: f32) -> Vec<[f32; 4]> {
    let [w, h] = size_of(desc);
    let mut level = vec![[0.0; 4]; w as usize * h as usize];
    let mut cache = HashMap::new();
    for y in 0..desc.pages_y() {
        for x in 0..desc.pages_x() {
            let id = PageId { x, y };
            let texels = flat_page(&mut cache, desc, id, flat).to_vec();
            put_page(&mut level, desc, id, &texels);
        }
    }
    level
}

/// The whole coarse level (row-major) of a document of `desc` holding `heights` (row-major,
/// width x height), reduced on the CPU.
pub fn dense_level(desc: &DocumentDesc, heights: &[f32]) -> Vec<[f32; 4]> {
    let [w, h] = size_of(desc);
    let mut level = vec![[0.0; 4]; w as usize * h as usize];
    let ids: Vec<PageId> = desc.page_ids().collect();
    let texels: Vec<Vec<[f32; 4]>> = ids
        .par_iter()
        .map(|&id| reduce_page(desc, id, &desc.page_from_dense(heights, id)))
        .collect();
    for (id, t) in ids.iter().zip(&texels) {
        put_page(&mut level, desc, *id, t);
    }
    level
}

/// Writes page `id`'s texels (row-major over its blocks) into the whole `level`.
pub fn put_page(level: &mut [[f32; 4]], desc: &DocumentDesc, id: PageId, texels: &[[f32; 4]]) {
    let (origin, size) = page_blocks(desc, id);
    put_rect(
        level,
        desc,
        [origin[0] as u32, origin[1] as u32],
        size[0],
        texels,
    );
}

/// Writes `texels` (row-major, `width` per row) into the whole `level` of `desc`, from texel
/// `origin`.
pub fn put_rect(
    level: &mut [[f32; 4]],
    desc: &DocumentDesc,
    origin: [u32; 2],
    width: u32,
    texels: &[[f32; 4]],
) {
    let [w, _] = size_of(desc);
    for (row, line) in texels.chunks_exact(width as usize).enumerate() {
        let at = (origin[1] as usize + row) * w as usize + origin[0] as usize;
        level[at..at + line.len()].copy_from_slice(line);
    }
}

/// The texels of the `size` rectangle from texel `origin` of the whole `level` of `desc`,
/// row-major.
pub fn take_rect(
    level: &[[f32; 4]],
    desc: &DocumentDesc,
    origin: [u32; 2],
    size: [u32; 2],
) -> Vec<[f32; 4]> {
    let [w, _] = size_of(desc);
    (origin[1]..origin[1] + size[1])
        .flat_map(|y| {
            let at = y as usize * w as usize + origin[0] as usize;
            level[at..at + size[0] as usize].iter().copied()
        })
        .collect()
}

/// Page `id` whole, in its own coordinates.
fn whole_page(desc: &DocumentDesc, id: PageId) -> Rect {
    let r = desc.page_rect(id);
    Rect::new(0, 0, r.width(), r.height())
}

/// Where page `id`'s blocks start in the coarse level, and how many there are.
fn page_blocks(desc: &DocumentDesc, id: PageId) -> ([i32; 2], [u32; 2]) {
    let r = desc.page_rect(id);
    (
        [r.x0 / FACTOR as i32, r.y0 / FACTOR as i32],
        [
            (r.width() as u32).div_ceil(FACTOR),
            (r.height() as u32).div_ceil(FACTOR),
        ],
    )
}

/// Coarse texels reduced on the CPU: where they go (first block, blocks) and their values.
type Uploaded = ([i32; 2], [u32; 2], Vec<[f32; 4]>);

/// A page whose blocks are recomputed: its front image on the GPU, or its coarse texels reduced
/// on the CPU ([`reduce_page`], where its bytes lie; flat pages: one reduction per page size).
pub enum PageSource<'a> {
    Gpu(&'a Image),
    Texels(Vec<[f32; 4]>),
}

/// The coarse image of one field and the pages waiting to be reduced into it.
pub struct CoarseLevel {
    gpu: Arc<Gpu>,
    desc: DocumentDesc,
    image: Image,
    kernel: ComputeKernel<CoarsePush>,
    /// Levels 1, 2, … of the pyramid, and the kernel reducing one into the next (with its set
    /// per level: reads the one below, writes this one).
    pyramid: Vec<Image>,
    reduce: ComputeKernel<ReducePush>,
    reduce_sets: Vec<DescriptorSet>,
    /// Pages waiting to be reduced, with the page-local rectangle whose values changed.
    pending: BTreeMap<PageId, Rect>,
}

impl CoarseLevel {
    /// The coarse level of a field of `desc` (None past [`MAX_SIDE`]), every page pending (the
    /// first refresh fills it).
    pub fn new(gpu: &Arc<Gpu>, desc: DocumentDesc) -> Result<Option<Self>> {
        if !kept(&desc) {
            return Ok(None);
        }
        let [w, h] = size_of(&desc);
        let image = Image::new(
            gpu,
            "coarse level",
            ImageDesc::new_2d(vk::Format::R32G32B32A32_SFLOAT, [w, h]).usage(
                vk::ImageUsageFlags::STORAGE
                    | vk::ImageUsageFlags::TRANSFER_SRC
                    | vk::ImageUsageFlags::TRANSFER_DST,
            ),
        )?;
        let shader = match desc.format {
            HeightFormat::R32f => &shaders::PAGES_COARSE_COMP,
            HeightFormat::R16 => &shaders::PAGES_COARSE_R16_COMP,
        };
        let kernel = ComputeKernel::new(
            gpu,
            shader,
            &[BindingKind::StorageImage, BindingKind::StorageImage],
            &[],
        )?;
        let pending = desc
            .page_ids()
            .map(|id| (id, whole_page(&desc, id)))
            .collect();
        let pyramid = pyramid_sizes(&desc)
            .into_iter()
            .map(|size| {
                let d = ImageDesc::new_2d(vk::Format::R32G32B32A32_SFLOAT, size)
                    .usage(vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::TRANSFER_SRC);
                Image::new(gpu, "coarse pyramid level", d)
            })
            .collect::<Result<Vec<_>>>()?;
        let reduce = ComputeKernel::new(
            gpu,
            &shaders::PAGES_COARSE_REDUCE_COMP,
            &[BindingKind::StorageImage, BindingKind::StorageImage],
            &[],
        )?;
        let reduce_sets = (0..pyramid.len())
            .map(|k| {
                let below = if k == 0 { &image } else { &pyramid[k - 1] };
                reduce.bind(&[
                    Resource::StorageImage(below),
                    Resource::StorageImage(&pyramid[k]),
                ])
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(Self {
            gpu: gpu.clone(),
            desc,
            image,
            kernel,
            pyramid,
            reduce,
            reduce_sets,
            pending,
        }))
    }

    /// The coarse level of a field of `desc` holding `texels` (the whole level, row-major, as
    /// [`Self::read`] gives it), nothing pending; None past [`MAX_SIDE`].
    pub fn from_texels(
        gpu: &Arc<Gpu>,
        desc: DocumentDesc,
        texels: &[[f32; 4]],
    ) -> Result<Option<Self>> {
        let Some(mut level) = Self::new(gpu, desc)? else {
            return Ok(None);
        };
        let [w, h] = size_of(&desc);
        assert_eq!(texels.len(), (w * h) as usize, "a whole coarse level");
        let bytes: &[u8] = bytemuck::cast_slice(texels);
        let mut up = Buffer::new(gpu, "coarse upload", BufferDesc::upload(bytes.len() as u64))?;
        up.write(bytes)?;
        let mut rec = Recorder::new(gpu)?;
        rec.buffer(&up, Access::HostWrite);
        rec.copy_buffer_to_image_region(&up, 0, &level.image, [0, 0], [w, h]);
        level.record_pyramid(&mut rec, [0, 0, w, h])?;
        rec.submit_and_wait()?;
        level.pending.clear();
        Ok(Some(level))
    }

    /// The coarse image (RGBA32F: lowest, highest, sum, first), current after [`Self::refresh`].
    pub fn image(&self) -> &Image {
        &self.image
    }

    /// Notes that pages' values changed.
    pub fn note(&mut self, ids: impl IntoIterator<Item = PageId>) {
        for id in ids {
            self.pending.insert(id, whole_page(&self.desc, id));
        }
    }

    /// Notes that values changed inside page-local rectangles of pages.
    pub fn note_rects(&mut self, rects: &[(PageId, Rect)]) {
        for &(id, r) in rects {
            let r = r.intersect(&whole_page(&self.desc, id));
            if !r.is_empty() {
                let e = self.pending.entry(id).or_insert(Rect::EMPTY);
                *e = e.union(&r);
            }
        }
    }

    /// Keeps waiting only the pages `keep` says.
    pub fn keep_pending(&mut self, keep: impl Fn(PageId) -> bool) {
        self.pending.retain(|&id, _| keep(id));
    }

    /// Pages waiting to be reduced.
    pub fn pending(&self) -> Vec<PageId> {
        self.pending.keys().copied().collect()
    }

    /// Reduces the pending pages into the level from the versions shown now (of a field of
    /// `desc` whose flat pages read `flat`): pages on the GPU there, the others (host memory,
    /// disk, flat) with the CPU twin, where their bytes lie.
    pub fn refresh_from(
        &mut self,
        desc: &DocumentDesc,
        flat_value: f32,
        versions: &Versions,
        places: &Residency,
    ) -> super::error::Result<()> {
        let visible = |id: PageId| versions.visible(id);
        let mut flat = HashMap::new();
        for chunk in self.pending().chunks(256) {
            let off_gpu: Vec<(PageId, &Version)> = chunk
                .iter()
                .filter_map(|&id| visible(id).map(|v| (id, &**v)))
                .filter(|(_, v)| places.gpu_page(v).is_none())
                .collect();
            // Pages off the GPU are reduced where their bytes lie, in parallel.
            let refs: Vec<&Version> = off_gpu.iter().map(|(_, v)| *v).collect();
            let ids: Vec<PageId> = off_gpu.iter().map(|(id, _)| *id).collect();
            let d = desc;
            let reduced = places.map_bytes(&refs, |i, b| reduce_page(d, ids[i], &decode(d, b)))?;
            let mut texels: HashMap<PageId, Vec<[f32; 4]>> =
                off_gpu.iter().map(|(id, _)| *id).zip(reduced).collect();
            let mut pages = Vec::with_capacity(chunk.len());
            for &id in chunk {
                let source = match visible(id) {
                    Some(v) => match places.gpu_page(v) {
                        Some(p) => PageSource::Gpu(p.front()),
                        None => PageSource::Texels(texels.remove(&id).expect("reduced above")),
                    },
                    None => PageSource::Texels(flat_page(&mut flat, desc, id, flat_value).to_vec()),
                };
                pages.push((id, source));
            }
            self.refresh(&pages)?;
        }
        Ok(())
    }

    /// Recomputes the blocks of `pages` (the pending ones, each with where its values are now),
    /// in one submission: GPU pages by the kernel, the others uploaded.
    pub fn refresh(&mut self, pages: &[(PageId, PageSource<'_>)]) -> Result<()> {
        if pages.is_empty() {
            return Ok(());
        }
        let d = self.desc;
        // Pages off the GPU: their texels, uploaded (in page order).
        let cpu: Vec<Uploaded> = pages
            .iter()
            .filter_map(|(id, s)| match s {
                PageSource::Texels(t) => {
                    let (origin, size) = page_blocks(&d, *id);
                    Some((origin, size, t.clone()))
                }
                PageSource::Gpu(_) => None,
            })
            .collect();
        let bytes: u64 = cpu.iter().map(|c| c.2.len() as u64 * 16).sum();
        let upload = if bytes > 0 {
            let mut b = Buffer::new(&self.gpu, "coarse upload", BufferDesc::upload(bytes))?;
            let all: Vec<f32> = cpu
                .iter()
                .flat_map(|c| c.2.iter().flatten().copied())
                .collect();
            b.write(&all)?;
            Some(b)
        } else {
            None
        };
        let sets = pages
            .iter()
            .filter_map(|(id, s)| match s {
                PageSource::Gpu(img) => Some((*id, *img)),
                _ => None,
            })
            .map(|(id, img)| {
                let set = self.kernel.bind(&[
                    Resource::StorageImage(img),
                    Resource::StorageImage(&self.image),
                ])?;
                Ok((id, img, set))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut rec = Recorder::new(&self.gpu)?;
        if let Some(up) = &upload {
            rec.buffer(up, Access::HostWrite);
            let mut at = 0;
            for (origin, size, texels) in &cpu {
                rec.copy_buffer_to_image_region(up, at, &self.image, *origin, *size);
                at += texels.len() as u64 * 16;
            }
        }
        // Blocks to reduce per page (GPU pages: those the changed rectangle covers; the others
        // are uploaded whole), then the rectangle of the level they cover for the pyramid.
        let blocks = |id: PageId, s: &PageSource| -> ([u32; 2], [u32; 2]) {
            let (_, size) = page_blocks(&d, id);
            match s {
                PageSource::Gpu(_) => {
                    let r = self.pending.get(&id).copied().unwrap_or(whole_page(&d, id));
                    let f = FACTOR as i32;
                    let (x0, y0) = ((r.x0 / f) as u32, (r.y0 / f) as u32);
                    let (x1, y1) = ((r.x1 + f - 1) / f, (r.y1 + f - 1) / f);
                    (
                        [x0, y0],
                        [(x1 as u32).min(size[0]) - x0, (y1 as u32).min(size[1]) - y0],
                    )
                }
                PageSource::Texels(_) => ([0, 0], size),
            }
        };
        let mut dirty = [u32::MAX, u32::MAX, 0, 0];
        for (id, s) in pages {
            let (origin, _) = page_blocks(&d, *id);
            let (first, count) = blocks(*id, s);
            let (x, y) = (origin[0] as u32 + first[0], origin[1] as u32 + first[1]);
            dirty = [
                dirty[0].min(x),
                dirty[1].min(y),
                dirty[2].max(x + count[0]),
                dirty[3].max(y + count[1]),
            ];
        }
        for (id, img, set) in &sets {
            let r = d.page_rect(*id);
            let (origin, _) = page_blocks(&d, *id);
            let (first, count) = blocks(*id, &PageSource::Gpu(img));
            if count[0] == 0 || count[1] == 0 {
                continue;
            }
            rec.image(img, Access::ComputeStorageRead);
            rec.image(&self.image, Access::ComputeStorageWrite);
            rec.pass(&self.kernel, set)
                .push(&CoarsePush {
                    page_size: [r.width(), r.height()],
                    coarse_origin: origin,
                    height_min: d.height_min,
                    height_range: d.height_range(),
                    block_origin: [first[0] as i32, first[1] as i32],
                })
                .dispatch([count[0], count[1], 1])?;
        }
        self.record_pyramid(&mut rec, dirty)?;
        // Not waited for: later work on the queue (a frame's draw, a readback) orders after it
        // through the images' barriers.
        // SAFETY: the host never maps the upload buffer again nor rewrites these sets (both go
        // with this call, released after the submission by the gpu layer); the coarse images
        // are not host-visible.
        let _ticket = unsafe { rec.submit_detached(None, None)? };
        for (id, _) in pages {
            self.pending.remove(id);
        }
        Ok(())
    }

    /// Records the reduction of every pyramid level over the texels above `rect` (`[x0, y0, x1,
    /// y1)` of the coarse level), after the coarse level's writes.
    fn record_pyramid<'a>(&'a self, rec: &mut Recorder<'a>, rect: [u32; 4]) -> Result<()> {
        let [mut x0, mut y0, mut x1, mut y1] = rect;
        let mut below_size = size_of(&self.desc);
        for (k, level) in self.pyramid.iter().enumerate() {
            (x0, y0, x1, y1) = (x0 / 2, y0 / 2, x1.div_ceil(2), y1.div_ceil(2));
            let below = if k == 0 {
                &self.image
            } else {
                &self.pyramid[k - 1]
            };
            rec.image(below, Access::ComputeStorageRead);
            rec.image(level, Access::ComputeStorageWrite);
            let size = [x1 - x0, y1 - y0];
            rec.pass(&self.reduce, &self.reduce_sets[k])
                .push(&ReducePush {
                    below_size: [below_size[0] as i32, below_size[1] as i32],
                    origin: [x0 as i32, y0 as i32],
                    size: [size[0] as i32, size[1] as i32],
                })
                .dispatch([size[0].div_ceil(8), size[1].div_ceil(8), 1])?;
            below_size = [level.desc.extent.width, level.desc.extent.height];
        }
        Ok(())
    }

    /// Levels of the pyramid above the coarse level (level 1 first).
    pub fn pyramid(&self) -> &[Image] {
        &self.pyramid
    }

    /// The texels of pyramid level `k` (1 is the first above the coarse level; panics outside
    /// 1..=levels), row-major (read back; for tests and tools).
    pub fn read_pyramid(&self, k: usize) -> Result<Vec<[f32; 4]>> {
        assert!((1..=self.pyramid.len()).contains(&k), "pyramid level {k}");
        read_texels(&self.gpu, &self.pyramid[k - 1])
    }

    /// The coarse texels, row-major (read back; for tests and tools).
    pub fn read(&self) -> Result<Vec<[f32; 4]>> {
        read_texels(&self.gpu, &self.image)
    }

    /// The coarse texels of `rect` (coarse texels, inside the level), row-major (read back,
    /// waited for).
    pub fn read_rect(&self, rect: Rect) -> Result<Vec<[f32; 4]>> {
        read_texels_in(&self.gpu, &self.image, rect)
    }
}

/// The RGBA32F texels of `image`, row-major.
fn read_texels(gpu: &Arc<Gpu>, image: &Image) -> Result<Vec<[f32; 4]>> {
    let (w, h) = (image.desc.extent.width, image.desc.extent.height);
    read_texels_in(gpu, image, Rect::new(0, 0, w as i32, h as i32))
}

/// The RGBA32F texels of `rect` of `image`, row-major.
fn read_texels_in(gpu: &Arc<Gpu>, image: &Image, rect: Rect) -> Result<Vec<[f32; 4]>> {
    let (w, h) = (rect.width() as u32, rect.height() as u32);
    let bytes = u64::from(w) * u64::from(h) * 16;
    let readback = Buffer::new(gpu, "coarse readback", BufferDesc::readback(bytes))?;
    let mut rec = Recorder::new(gpu)?;
    rec.copy_image_region_to_buffer(image, [rect.x0, rect.y0], [w, h], &readback, 0);
    rec.buffer(&readback, Access::HostRead);
    rec.submit_and_wait()?;
    let data: &[f32] = bytemuck::cast_slice(readback.mapped(bytes as usize)?);
    Ok(data
        .chunks_exact(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect())
}

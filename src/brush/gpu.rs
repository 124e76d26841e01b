//! The brush engine on the GPU: a paged heightfield of R32F image pairs, batched ping-pong passes
//! in waves, a budgeted stroke queue, copy-on-write undo.
//!
//! * **Pages.** A page is a pair of storage images (front/back) and two descriptor sets:
//!   set 0 reads image 0 and writes image 1, set 1 the reverse, so swapping roles is a matter of
//!   which set is bound ([`GpuPage`]). Pages are allocated on first touch; an untouched page of a
//!   flat document holds no memory.
//! * **Passes.** A stroke's instances are split into per-page lists (paper section 4); each list
//!   is applied in batches of up to `batch` instances per dispatch, in order. A pass writes the
//!   back image over the union of its own dirty rectangle and the previous pass's: before the
//!   pass the back image is stale exactly where the previous pass wrote, so afterwards it is a
//!   complete copy of the new state and no page is ever copied whole between passes.
//! * **Waves.** The k-th pass of every page a stroke touches runs in one wave behind one barrier
//!   (passes of different pages touch disjoint images).
//! * **Queue.** Strokes wait in a FIFO; [`GpuTerrain::pump`] runs waves (or multi-tap instances)
//!   until a GPU time budget is spent, so a huge brush never holds a frame. A stroke's pages are
//!   prepared when it reaches the front, so it sees every stroke before it.
//! * **Undo.** A stroke gives every page it touches a new version (both images copied from the old
//!   front, or cleared to the flat height) and records the old versions as one undo step;
//!   untouched pages stay shared between versions. A memory budget forgets the oldest steps.

use super::stamp::Stamp;
use super::{instances_reaching, level_texel, reach, touched_pages, BrushSettings, BrushType};
use crate::gpu::shared::{BrushInstance, BrushPass, SmoothPass};
use crate::gpu::{
    shaders, vk, Access, BindingKind, Buffer, BufferDesc, ComputeKernel, DescriptorSet, Gpu,
    GpuError, GpuTimer, Image, ImageDesc, PassTime, Recorder, Resource, Result,
};
use crate::noise::{GpuNoise, NoiseKind, NoiseTables};
use crate::terrain::document::{DocumentDesc, HeightFormat, PageId, Rect};
use crate::terrain::history::{History, DEFAULT_UNDO_BUDGET};
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::rc::Rc;
use std::sync::Arc;

/// Instances per dispatch unless told otherwise (paper section 4).
pub const DEFAULT_BATCH: usize = 16;
/// Most instances one dispatch may take.
pub const MAX_BATCH: usize = 256;
/// Workgroup size of the brush kernels (pointwise_body.glsl, smooth_body.glsl).
const GROUP: [u32; 2] = [16, 16];
/// Timed waves per submission.
const PASSES_PER_SUBMIT: usize = 1024;

const PAGE_BINDINGS: [BindingKind; 2] = [BindingKind::StorageImage, BindingKind::StorageImage];
const STROKE_BINDINGS: [BindingKind; 4] = [
    BindingKind::SampledImage,
    BindingKind::SampledImage,
    BindingKind::StorageBuffer,
    BindingKind::SampledImage,
];

/// One version of a page: its image pair, the two ping-pong sets and which image is current.
pub struct GpuPage {
    images: [Image; 2],
    sets: [DescriptorSet; 2],
    /// In-place passes: set k binds image k as both the read and the written image.
    in_place_sets: [DescriptorSet; 2],
    front: Cell<usize>,
    /// Page-local rectangle the last pass wrote with new values: the back image lacks it.
    stale: Cell<Rect>,
}

impl GpuPage {
    fn front(&self) -> &Image {
        &self.images[self.front.get()]
    }

    fn back(&self) -> &Image {
        &self.images[1 - self.front.get()]
    }

    /// GPU memory of the image pair (r32f).
    pub fn bytes(&self) -> u64 {
        let e = self.images[0].desc.extent;
        let texel = if self.images[0].desc.format == vk::Format::R16_UNORM {
            2
        } else {
            4
        };
        u64::from(e.width) * u64::from(e.height) * texel * 2
    }
}

/// A stroke being applied: its new page versions and how far its work got.
struct ActiveStroke {
    brush: BrushSettings,
    instances: Vec<BrushInstance>,
    ids: Vec<PageId>,
    fresh: Vec<GpuPage>,
    /// Per page: (first instance in the buffer, count, page-local dirty rectangle) of each batch.
    page_passes: Vec<Vec<(u32, u32, Rect)>>,
    instance_buf: Option<Buffer>,
    /// Stamp brushes: the stamp image.
    stamp_image: Option<Image>,
    level_target: f32,
    /// A continuation of the previous stroke (a stroke painted live, part by part): joins its
    /// undo step.
    join: bool,
    /// Units of work: waves (pointwise brushes) or instances (multi-tap brushes).
    units: usize,
    done: usize,
    stats: StrokeStats,
}

/// What one [`GpuTerrain::pump`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PumpReport {
    /// Waves or multi-tap instances run.
    pub units: usize,
    /// Their GPU time (timestamps; 0 without timestamps).
    pub gpu_ns: f64,
    /// GPU time of the instance uploads and copy-on-write page copies of the strokes this pump
    /// started (timestamps).
    pub copy_ns: f64,
    pub strokes_finished: usize,
    /// Strokes still queued or in progress.
    pub pending_strokes: usize,
}

/// A stamp as an R32F sampled image, ready for compute shaders.
fn upload_stamp(gpu: &Arc<Gpu>, stamp: &Stamp) -> Result<Image> {
    let image = Image::new(
        gpu,
        "stamp",
        ImageDesc::new_2d(vk::Format::R32_SFLOAT, [stamp.width, stamp.height])
            .usage(vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST),
    )?;
    let mut up = Buffer::new(
        gpu,
        "stamp upload",
        BufferDesc::upload(stamp.values.len() as u64 * 4),
    )?;
    up.write(&stamp.values)?;
    let mut rec = Recorder::new(gpu)?;
    rec.buffer(&up, Access::HostWrite);
    rec.copy_buffer_to_image(&up, &image);
    rec.image(&image, Access::ComputeSampledRead);
    rec.submit_and_wait()?;
    Ok(image)
}

/// Two page-local coordinates (< 2^16) in one word, x in the low half.
fn pack16(x: i32, y: i32) -> u32 {
    x as u32 | (y as u32) << 16
}

/// One planned smooth pass: the images it binds, its set and push constants.
struct SmoothPlan<'p> {
    bound: Vec<&'p Image>,
    back: &'p Image,
    set: DescriptorSet,
    push: SmoothPass,
    write: Rect,
}

/// What the last stroke cost.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StrokeStats {
    pub instances: usize,
    pub page_tasks: usize,
    pub passes: usize,
    /// Texels the passes wrote (each also read once): bytes moved = 8 x this for r32f.
    pub texels_written: u64,
    /// GPU time of the brush passes (timestamps), without page allocation and copy-on-write.
    pub gpu_ns: Option<f64>,
    /// Waves: sets of passes (one per page) that run together; as many as the busiest page's
    /// batches.
    pub waves: usize,
    /// Each wave's GPU time, in order.
    pub wave_ns: Vec<f64>,
}

impl StrokeStats {
    /// Adds the timed waves of one submission.
    fn add_waves(&mut self, times: &[PassTime]) {
        self.wave_ns.extend(times.iter().map(|p| p.gpu_ns));
        let ns: f64 = times.iter().map(|p| p.gpu_ns).sum();
        self.gpu_ns = Some(self.gpu_ns.unwrap_or(0.0) + ns);
    }
}

/// A paged heightfield on the GPU with its brush kernels and undo history.
pub struct GpuTerrain {
    gpu: Arc<Gpu>,
    desc: DocumentDesc,
    flat: f32,
    noise: GpuNoise,
    /// Pointwise kernels by (brush, noise kind, tile culling).
    kernels: HashMap<(i32, i32, bool), ComputeKernel<BrushPass>>,
    smooth_kernel: Option<ComputeKernel<SmoothPass>>,
    pages: BTreeMap<PageId, Rc<GpuPage>>,
    history: History<Rc<GpuPage>>,
    batch: usize,
    /// Pointwise passes read and write the front image in place instead of ping-ponging.
    in_place: bool,
    /// Pointwise kernels cull the batch's instances per 16x16 tile.
    tile_culling: bool,
    timer: Option<GpuTimer>,
    pub last_stroke: StrokeStats,
    queue: std::collections::VecDeque<(BrushSettings, Vec<BrushInstance>, bool)>,
    /// Pages whose visible heights changed since [`Self::take_changed_pages`] (the renderer's
    /// cue to refresh tile bounds and descriptor sets).
    changed: BTreeSet<PageId>,
    /// Level target of the last stroke, kept for its continuations.
    last_level_target: f32,
    /// GPU time of instance uploads and copy-on-write page copies since the last pump report.
    copy_ns: f64,
    /// 1x1 placeholder bound as the stamp of brushes without one.
    no_stamp: Image,
    active: Option<ActiveStroke>,
}

impl GpuTerrain {
    /// A flat document at height `flat`.
    pub fn new(
        gpu: &Arc<Gpu>,
        desc: DocumentDesc,
        flat: f32,
        tables: &NoiseTables,
    ) -> Result<Self> {
        desc.validate().map_err(GpuError::Usage)?;
        if desc.format == HeightFormat::R16 && !gpu.supports_storage_format(vk::Format::R16_UNORM) {
            return Err(GpuError::usage(format!(
                "{} cannot store r16 pages (no R16_UNORM storage images)",
                gpu.info().name
            )));
        }
        let no_stamp = upload_stamp(
            gpu,
            &Stamp {
                width: 1,
                height: 1,
                values: vec![0.0],
            },
        )?;
        Ok(Self {
            gpu: gpu.clone(),
            desc,
            flat: desc.quantize(flat),
            noise: GpuNoise::new(gpu, tables)?,
            kernels: HashMap::new(),
            smooth_kernel: None,
            pages: BTreeMap::new(),
            history: History::new(|p: &Rc<GpuPage>| p.bytes(), DEFAULT_UNDO_BUDGET),
            batch: DEFAULT_BATCH,
            in_place: false,
            tile_culling: true,
            timer: GpuTimer::new(gpu, PASSES_PER_SUBMIT as u32)?,
            last_stroke: StrokeStats::default(),
            queue: Default::default(),
            no_stamp,
            active: None,
            changed: BTreeSet::new(),
            last_level_target: 0.0,
            copy_ns: 0.0,
        })
    }

    /// A document holding `heights` (row-major, width x height).
    pub fn from_heights(
        gpu: &Arc<Gpu>,
        desc: DocumentDesc,
        heights: &[f32],
        tables: &NoiseTables,
    ) -> Result<Self> {
        if heights.len() != desc.width as usize * desc.height as usize {
            return Err(GpuError::usage(
                "initial heights do not match the document size",
            ));
        }
        let mut t = Self::new(gpu, desc, 0.0, tables)?;
        let ids: Vec<PageId> = (0..desc.pages_y())
            .flat_map(|y| (0..desc.pages_x()).map(move |x| PageId { x, y }))
            .collect();
        t.upload_pages(
            ids.into_iter()
                .map(|id| Ok((id, desc.page_from_dense(heights, id)))),
        )?;
        Ok(t)
    }

    /// Gives the listed pages new versions holding the given heights, 64 per submission.
    fn upload_pages(
        &mut self,
        pages: impl Iterator<Item = Result<(PageId, Vec<f32>)>>,
    ) -> Result<()> {
        let gpu = self.gpu.clone();
        let mut pages = pages.peekable();
        while pages.peek().is_some() {
            let mut uploads = Vec::new();
            let mut made = Vec::new();
            for item in pages.by_ref().take(64) {
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
            for (id, page) in made {
                self.pages.insert(id, Rc::new(page));
                self.changed.insert(id);
            }
        }
        Ok(())
    }

    pub fn desc(&self) -> &DocumentDesc {
        &self.desc
    }

    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// Instances per dispatch for pointwise brushes (1..=256).
    pub fn set_batch(&mut self, batch: usize) -> Result<()> {
        if !(1..=MAX_BATCH).contains(&batch) {
            return Err(GpuError::usage(format!(
                "batch must be between 1 and {MAX_BATCH}, got {batch}"
            )));
        }
        self.batch = batch;
        Ok(())
    }

    /// Pointwise passes in place: each invocation reads and writes its own texel of the
    /// page's front image, so a pass writes only its own rectangle (ping-pong passes also copy
    /// the previous pass's rectangle into the back image) and no descriptor set flips. Results
    /// are identical; multi-tap brushes always ping-pong (their taps read neighbours). Off by
    /// default; `scarp bench` measures both.
    pub fn set_in_place(&mut self, on: bool) {
        self.in_place = on;
    }

    /// Tile culling in pointwise kernels (on by default, used from batch 8 up): each 16x16
    /// workgroup first marks the batch's instances that reach it, and its texels test only
    /// those. Results are identical; off is kept for `scarp bench`'s comparison.
    pub fn set_tile_culling(&mut self, on: bool) {
        self.tile_culling = on;
    }

    /// Whether pointwise passes cull per tile now. Below batch 8 the marking pass and its
    /// barrier cost more than the tests they save (H200: 5-9% slower at batch 1, even at 4;
    /// 1.2-1.6x faster at 16 and 32; docs/PERF.md).
    fn culls(&self) -> bool {
        self.tile_culling && self.batch >= 8
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

    /// The value an image of this document's format holds for (quantized) height `h`.
    fn stored_value(&self, h: f32) -> f32 {
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

    /// The current version of a page, if it exists (for identity checks).
    pub fn page(&self, id: PageId) -> Option<&Rc<GpuPage>> {
        self.pages.get(&id)
    }

    fn kernel(&mut self, brush: BrushType, kind: NoiseKind) -> Result<&ComputeKernel<BrushPass>> {
        // Raise and lower share a pipeline; the noise kind only matters to noise brushes.
        let (brush_index, kind_index) = brush.kernel_key(kind);
        let key = (brush_index, kind_index, self.culls());
        if !self.kernels.contains_key(&key) {
            let k = ComputeKernel::with_sets(
                &self.gpu,
                match self.desc.format {
                    HeightFormat::R32f => &shaders::BRUSH_POINTWISE_COMP,
                    HeightFormat::R16 => &shaders::BRUSH_POINTWISE_R16_COMP,
                },
                &[&PAGE_BINDINGS, &STROKE_BINDINGS],
                &[key.0, key.1, i32::from(key.2)],
            )?;
            self.kernels.insert(key, k);
        }
        Ok(&self.kernels[&key])
    }

    fn new_page(&mut self, id: PageId) -> Result<GpuPage> {
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
        let layout = self.kernel(BrushType::Raise, NoiseKind::Fbm)?;
        // (read, written) image pairs.
        let bind = |read: &Image, write: &Image| {
            layout.bind_set(
                0,
                &[Resource::StorageImage(read), Resource::StorageImage(write)],
            )
        };
        let sets = [bind(&images[0], &images[1])?, bind(&images[1], &images[0])?];
        let in_place_sets = [bind(&images[0], &images[0])?, bind(&images[1], &images[1])?];
        // The back image starts undefined: the first pass must write the whole page.
        let whole = Rect::new(0, 0, r.width(), r.height());
        Ok(GpuPage {
            images,
            sets,
            in_place_sets,
            front: Cell::new(0),
            stale: Cell::new(whole),
        })
    }

    /// Height at texel (x, y), clamped into the document, after every queued stroke.
    pub fn height_at(&mut self, x: i32, y: i32) -> Result<f32> {
        self.pump(None)?;
        self.committed_height_at(x, y)
    }

    /// Height at texel (x, y) of the committed document (one texel read back).
    fn committed_height_at(&self, x: i32, y: i32) -> Result<f32> {
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

    /// Applies one stroke's instances in order, as one undo step, draining the queue fully
    /// (headless replay).
    pub fn apply_stroke(
        &mut self,
        brush: &BrushSettings,
        instances: &[BrushInstance],
    ) -> Result<()> {
        self.enqueue_stroke(brush, instances);
        self.pump(None).map(|_| ())
    }

    /// Queues a stroke (FIFO). Nothing runs until [`Self::pump`]; its pages are prepared when it
    /// reaches the front, so it sees every stroke queued before it.
    pub fn enqueue_stroke(&mut self, brush: &BrushSettings, instances: &[BrushInstance]) {
        self.queue
            .push_back((brush.clone(), instances.to_vec(), false));
    }

    /// Queues the next part of a stroke being painted live: with `join` it continues the
    /// previous stroke (same undo step, same level target), so a stroke painted part by part
    /// ends bit-identical to the same instances applied as one stroke.
    pub fn enqueue_stroke_part(
        &mut self,
        brush: &BrushSettings,
        instances: &[BrushInstance],
        join: bool,
    ) {
        self.queue
            .push_back((brush.clone(), instances.to_vec(), join));
    }

    /// The flat height of pages that hold no memory.
    pub fn flat(&self) -> f32 {
        self.flat
    }

    /// The image holding page `id`'s heights as they should be shown now: the stroke under way's
    /// version of the page if it has one (its front image after the last wave run), else the
    /// committed one; None for a page that holds no memory (flat).
    pub fn visible_image(&self, id: PageId) -> Option<&Image> {
        if let Some(a) = &self.active {
            if let Some(i) = a.ids.iter().position(|&p| p == id) {
                return Some(a.fresh[i].front());
            }
        }
        self.pages.get(&id).map(|p| p.front())
    }

    /// Pages whose visible heights changed since the last call.
    pub fn take_changed_pages(&mut self) -> BTreeSet<PageId> {
        std::mem::take(&mut self.changed)
    }

    /// Strokes queued or in progress.
    pub fn pending_strokes(&self) -> usize {
        self.queue.len() + usize::from(self.active.is_some())
    }

    /// Runs queued work: waves of pointwise brushes, instances of multi-tap ones, in order. With
    /// a budget it stops once the measured GPU time of this call reaches `budget_ms` (at least
    /// one unit runs, and each submission is sized from the units measured so far), so a huge
    /// brush never holds a frame; `None` drains everything, and so does any budget on a queue
    /// without timestamps (nothing to measure against).
    pub fn pump(&mut self, budget_ms: Option<f64>) -> Result<PumpReport> {
        let mut report = PumpReport::default();
        let budget_ns = budget_ms.map(|ms| ms * 1e6);
        let mut per_unit_ns: Option<f64> = None;
        loop {
            let mut stroke = match self.active.take() {
                Some(s) => s,
                None => match self.queue.pop_front() {
                    Some((brush, instances, join)) => self.activate(brush, instances, join)?,
                    None => break,
                },
            };
            let left = stroke.units - stroke.done;
            let count = match (budget_ns, per_unit_ns) {
                (None, _) => left,
                (Some(_), None) => 1,
                (Some(b), Some(u)) => {
                    (((b - report.gpu_ns) / u.max(1.0)).floor() as usize).clamp(1, left.max(1))
                }
            };
            let count = count.min(left);
            let before = stroke.stats.gpu_ns.unwrap_or(0.0);
            let range = stroke.done..stroke.done + count;
            if stroke.brush.brush.is_multitap() {
                self.record_multitap(&mut stroke, range)?;
            } else {
                self.record_pointwise(&mut stroke, range)?;
            }
            stroke.done += count;
            self.changed.extend(stroke.ids.iter().copied());
            let spent = stroke.stats.gpu_ns.unwrap_or(0.0) - before;
            report.gpu_ns += spent;
            report.units += count;
            if count > 0 {
                per_unit_ns = Some(spent / count as f64);
            }
            if stroke.done >= stroke.units {
                self.finish(stroke);
                report.strokes_finished += 1;
            } else {
                self.active = Some(stroke);
            }
            if budget_ns.is_some_and(|b| report.gpu_ns >= b) {
                break;
            }
        }
        report.pending_strokes = self.pending_strokes();
        report.copy_ns = std::mem::take(&mut self.copy_ns);
        Ok(report)
    }

    /// Prepares the stroke at the front of the queue: level target, per-page instance lists,
    /// new page versions (copy-on-write) and the instance upload.
    fn activate(
        &mut self,
        brush: BrushSettings,
        instances: Vec<BrushInstance>,
        join: bool,
    ) -> Result<ActiveStroke> {
        let _p = crate::profile::scope("brush: activate");
        let level_target = match (brush.brush, level_texel(&instances)) {
            (BrushType::Level, _) if join => self.last_level_target,
            (BrushType::Level, Some((x, y))) => self.committed_height_at(x, y)?,
            _ => 0.0,
        };
        self.last_level_target = level_target;
        let ids = touched_pages(&self.desc, &instances);
        // Per-page instance lists, concatenated in one buffer.
        let mut flat_list: Vec<BrushInstance> = Vec::new();
        let mut page_passes: Vec<Vec<(u32, u32, Rect)>> = Vec::with_capacity(ids.len());
        for &id in &ids {
            let r = self.desc.page_rect(id);
            let start = flat_list.len();
            flat_list.extend(instances_reaching(&instances, &r));
            // Batches of this page, in instance order.
            let passes = (start..flat_list.len())
                .step_by(self.batch)
                .map(|first| {
                    let end = (first + self.batch).min(flat_list.len());
                    let dirty = flat_list[first..end]
                        .iter()
                        .fold(Rect::EMPTY, |acc, b| acc.union(&reach(b)))
                        .intersect(&r)
                        .translate(-r.x0, -r.y0);
                    (first as u32, (end - first) as u32, dirty)
                })
                .collect();
            page_passes.push(passes);
        }
        let units = if ids.is_empty() {
            0
        } else if brush.brush.is_multitap() {
            instances.len()
        } else {
            page_passes.iter().map(Vec::len).max().unwrap_or(0)
        };
        let stats = StrokeStats {
            instances: instances.len(),
            page_tasks: ids.len(),
            ..Default::default()
        };
        // A continuation writes in place into the versions its stroke already made (the undo
        // step holds the versions from before the stroke); other pages get new versions.
        let mut fresh = Vec::with_capacity(ids.len());
        let mut reused = vec![false; ids.len()];
        for (k, &id) in ids.iter().enumerate() {
            if join && self.history.last_step_holds(id) {
                if let Some(rc) = self.pages.remove(&id) {
                    match Rc::try_unwrap(rc) {
                        Ok(page) => {
                            fresh.push(page);
                            reused[k] = true;
                            continue;
                        }
                        Err(rc) => {
                            self.pages.insert(id, rc);
                        }
                    }
                }
            }
            fresh.push(self.new_page(id)?);
        }
        let instance_buf = if flat_list.is_empty() {
            None
        } else {
            let bytes = (flat_list.len() * std::mem::size_of::<BrushInstance>()) as u64;
            let mut staging =
                Buffer::new(&self.gpu, "instances upload", BufferDesc::upload(bytes))?;
            staging.write(&flat_list)?;
            let buf = Buffer::new(
                &self.gpu,
                "stroke instances",
                BufferDesc::new(bytes).usage(
                    vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST,
                ),
            )?;
            let mut rec = Recorder::new(&self.gpu)?;
            let mut query = None;
            if let Some(t) = &self.timer {
                rec.reset_timer(t);
                query = Some((t, rec.timer_begin(t, "copies")?));
            }
            rec.buffer(&staging, Access::HostWrite);
            rec.copy_buffer(&staging, 0, &buf, 0, bytes);
            // Both images of a new version start complete, so the first pass writes only its
            // dirty rectangle.
            for ((id, page), _) in ids.iter().zip(&fresh).zip(&reused).filter(|(_, &r)| !r) {
                for image in &page.images {
                    match self.pages.get(id) {
                        Some(old) => rec.copy_image(old.front(), image),
                        None => rec.clear_image(image, self.stored_value(self.flat)),
                    }
                }
                page.stale.set(Rect::EMPTY);
            }
            if let Some((t, q)) = query {
                rec.timer_end(t, q);
            }
            rec.submit_and_wait()?;
            if let Some(t) = &self.timer {
                self.copy_ns += t.results()?.iter().map(|p| p.gpu_ns).sum::<f64>();
            }
            Some(buf)
        };
        let stamp_image = match (&brush.brush, &brush.stamp) {
            (BrushType::Stamp, Some(stamp)) => Some(upload_stamp(&self.gpu, stamp)?),
            _ => None,
        };
        Ok(ActiveStroke {
            brush,
            instances,
            ids,
            fresh,
            page_passes,
            instance_buf,
            stamp_image,
            level_target,
            join,
            units,
            done: 0,
            stats,
        })
    }

    /// Commits a finished stroke: its page versions replace the old ones, which become its undo
    /// step.
    fn finish(&mut self, stroke: ActiveStroke) {
        let _p = crate::profile::scope("brush: finish");
        let previous = stroke
            .ids
            .iter()
            .zip(stroke.fresh)
            .map(|(&id, page)| (id, self.pages.insert(id, Rc::new(page))))
            .collect();
        if stroke.join {
            self.history.record_joined(previous);
        } else {
            self.history.record(previous);
        }
        self.last_stroke = stroke.stats;
    }

    /// Records and runs waves `units` of a pointwise brush: wave k is the k-th batched pass of
    /// every page the stroke touches.
    fn record_pointwise(
        &mut self,
        stroke: &mut ActiveStroke,
        units: std::ops::Range<usize>,
    ) -> Result<()> {
        let _p = crate::profile::scope("brush: waves");
        let brush = stroke.brush.clone();
        self.kernel(brush.brush, brush.noise.kind)?;
        let (brush_index, kind_index) = brush.brush.kernel_key(brush.noise.kind);
        let kernel = &self.kernels[&(brush_index, kind_index, self.culls())];
        let Some(instance_buf) = stroke.instance_buf.as_ref() else {
            return Ok(());
        };
        let (perm, grad) = self.noise.tables();
        let stroke_set = kernel.bind_set(
            1,
            &[
                Resource::SampledImage(perm),
                Resource::SampledImage(grad),
                Resource::StorageBuffer(instance_buf),
                Resource::SampledImage(stroke.stamp_image.as_ref().unwrap_or(&self.no_stamp)),
            ],
        )?;
        let base = BrushPass {
            page_origin: [0, 0],
            rect_min_packed: 0,
            rect_size_packed: 0,
            first_instance: 0,
            instance_count: 0,
            falloff: brush.falloff.index(),
            falloff_power: brush.falloff_power,
            level_target: stroke.level_target,
            noise: brush.noise.params(),
            brush_param: if brush.brush == BrushType::Stamp {
                brush.stamp_scale
            } else {
                brush.dir_ratio
            },
            height_min: self.desc.height_min,
            height_range: self.desc.height_range(),
        };
        // Waves: pass k of every page, which touch disjoint images, run together behind one
        // barrier; wave k+1 waits for wave k. Recording page after page instead would put a
        // barrier (a wait for all earlier compute work) between every two small dispatches.
        let (ids, fresh, page_passes, stats) = (
            &stroke.ids,
            &stroke.fresh,
            &stroke.page_passes,
            &mut stroke.stats,
        );
        let label = format!("brush {}", brush.brush.name());
        let wave_ids: Vec<usize> = units.collect();
        for chunk in wave_ids.chunks(PASSES_PER_SUBMIT) {
            let mut rec = Recorder::new(&self.gpu)?;
            if let Some(t) = &self.timer {
                rec.reset_timer(t);
            }
            rec.image(perm, Access::ComputeSampledRead);
            rec.image(grad, Access::ComputeSampledRead);
            rec.image(
                stroke.stamp_image.as_ref().unwrap_or(&self.no_stamp),
                Access::ComputeSampledRead,
            );
            rec.buffer(instance_buf, Access::ComputeStorageRead);
            for &wave in chunk {
                let active: Vec<usize> = (0..ids.len())
                    .filter(|&i| wave < page_passes[i].len())
                    .collect();
                for &i in &active {
                    if self.in_place {
                        rec.image(fresh[i].front(), Access::ComputeStorageReadWrite);
                    } else {
                        rec.image(fresh[i].front(), Access::ComputeStorageRead);
                        rec.image(fresh[i].back(), Access::ComputeStorageWrite);
                    }
                }
                rec.flush_barriers();
                let query = match &self.timer {
                    Some(t) => Some((t, rec.timer_begin(t, &label)?)),
                    None => None,
                };
                for &i in &active {
                    let page = &fresh[i];
                    let r = self.desc.page_rect(ids[i]);
                    let (first, count, dirty) = page_passes[i][wave];
                    // Ping-pong passes also bring the back image up to date where the previous
                    // pass wrote.
                    let write = if self.in_place {
                        dirty
                    } else {
                        dirty.union(&page.stale.get())
                    };
                    let push = BrushPass {
                        page_origin: [r.x0, r.y0],
                        rect_min_packed: pack16(write.x0, write.y0),
                        rect_size_packed: pack16(write.width(), write.height()),
                        first_instance: first,
                        instance_count: count,
                        ..base
                    };
                    let groups = [
                        (write.width() as u32).div_ceil(GROUP[0]),
                        (write.height() as u32).div_ceil(GROUP[1]),
                        1,
                    ];
                    stats.texels_written += write.width() as u64 * write.height() as u64;
                    // Accesses were declared for the whole wave above.
                    let set = if self.in_place {
                        &page.in_place_sets[page.front.get()]
                    } else {
                        &page.sets[page.front.get()]
                    };
                    rec.pass_sets(kernel, &[set, &stroke_set])
                        .push(&push)
                        .dispatch(groups)?;
                    if self.in_place {
                        // The back image now lacks this rectangle too.
                        page.stale.set(page.stale.get().union(&dirty));
                    } else {
                        page.front.set(1 - page.front.get());
                        page.stale.set(dirty);
                    }
                }
                if let Some((t, q)) = query {
                    rec.timer_end(t, q);
                }
                stats.passes += active.len();
                stats.waves += 1;
            }
            rec.submit_and_wait()?;
            if let Some(t) = &self.timer {
                stats.add_waves(&t.results()?);
            }
        }
        Ok(())
    }

    fn smooth_kernel(&mut self) -> Result<&ComputeKernel<SmoothPass>> {
        if self.smooth_kernel.is_none() {
            self.smooth_kernel = Some(ComputeKernel::new(
                &self.gpu,
                match self.desc.format {
                    HeightFormat::R32f => &shaders::BRUSH_SMOOTH_COMP,
                    HeightFormat::R16 => &shaders::BRUSH_SMOOTH_R16_COMP,
                },
                &[BindingKind::StorageImage; 10],
                &[],
            )?);
        }
        Ok(self.smooth_kernel.as_ref().expect("built above"))
    }

    /// Records and runs a multi-tap brush (smooth/contrast): one instance per wave, each of its
    /// pages reading the 3x3 neighbourhood of page fronts so taps cross page borders.
    fn record_multitap(
        &mut self,
        stroke: &mut ActiveStroke,
        units: std::ops::Range<usize>,
    ) -> Result<()> {
        let ActiveStroke {
            brush,
            instances,
            ids,
            fresh,
            stats,
            ..
        } = stroke;
        let (brush, ids, fresh) = (&*brush, &ids[..], &fresh[..]);
        self.smooth_kernel()?;
        let kernel = self.smooth_kernel.as_ref().expect("built above");
        let d = self.desc;
        let index: HashMap<PageId, usize> =
            ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
        let label = format!("brush {}", brush.brush.name());
        for chunk in instances[units].chunks(PASSES_PER_SUBMIT) {
            // Plan the chunk's waves first (descriptor sets must outlive the recording), following
            // the fronts' flips on copies of the pages' state.
            let mut front: Vec<usize> = fresh.iter().map(|p| p.front.get()).collect();
            let mut stale: Vec<Rect> = fresh.iter().map(|p| p.stale.get()).collect();
            let mut plan: Vec<Vec<SmoothPlan>> = Vec::with_capacity(chunk.len());
            for b in chunk {
                let reach = reach(b);
                let pages: Vec<usize> = d
                    .pages_in(&reach)
                    .iter()
                    .filter_map(|id| index.get(id).copied())
                    .collect();
                let mut wave = Vec::with_capacity(pages.len());
                let mut dirties = Vec::with_capacity(pages.len());
                for &i in &pages {
                    let id = ids[i];
                    let r = d.page_rect(id);
                    let own_front = &fresh[i].images[front[i]];
                    let mut bound: Vec<&Image> = Vec::with_capacity(9);
                    let mut mask = 0u32;
                    for n in 0..9i32 {
                        let (nx, ny) = (id.x as i32 + n % 3 - 1, id.y as i32 + n / 3 - 1);
                        let inside = nx >= 0
                            && ny >= 0
                            && nx < d.pages_x() as i32
                            && ny < d.pages_y() as i32;
                        let nid = PageId {
                            x: nx.max(0) as u32,
                            y: ny.max(0) as u32,
                        };
                        // Its new version if the stroke touches it, else the document's, else flat.
                        let img = match (inside, index.get(&nid)) {
                            (false, _) => None,
                            (true, Some(&j)) => Some(&fresh[j].images[front[j]]),
                            (true, None) => self.pages.get(&nid).map(|p| p.front()),
                        };
                        if img.is_some() {
                            mask |= 1 << n;
                        }
                        bound.push(img.unwrap_or(own_front));
                    }
                    let back = &fresh[i].images[1 - front[i]];
                    let mut resources: Vec<Resource> = bound
                        .iter()
                        .map(|&img| Resource::StorageImage(img))
                        .collect();
                    resources.push(Resource::StorageImage(back));
                    let set = kernel.bind(&resources)?;
                    let dirty = reach.intersect(&r).translate(-r.x0, -r.y0);
                    let write = dirty.union(&stale[i]);
                    let push = SmoothPass {
                        instance: *b,
                        page_origin: [r.x0, r.y0],
                        self_size: [r.width(), r.height()],
                        doc_size: [d.width as i32, d.height as i32],
                        rect_min: [write.x0, write.y0],
                        rect_size: [write.width(), write.height()],
                        page_size: d.page_size as i32,
                        falloff: brush.falloff.index(),
                        falloff_power: brush.falloff_power,
                        flat_height: self.flat,
                        present_mask: mask,
                        height_min: d.height_min,
                        height_range: d.height_range(),
                    };
                    wave.push(SmoothPlan {
                        bound,
                        back,
                        set,
                        push,
                        write,
                    });
                    dirties.push((i, dirty));
                }
                // Every page of the wave read the fronts as they were before it.
                for (i, dirty) in dirties.drain(..) {
                    front[i] = 1 - front[i];
                    stale[i] = dirty;
                }
                plan.push(wave);
            }

            let mut rec = Recorder::new(&self.gpu)?;
            if let Some(t) = &self.timer {
                rec.reset_timer(t);
            }
            for wave in &plan {
                for w in wave {
                    for img in &w.bound {
                        rec.image(img, Access::ComputeStorageRead);
                    }
                    rec.image(w.back, Access::ComputeStorageWrite);
                }
                rec.flush_barriers();
                let query = match &self.timer {
                    Some(t) => Some((t, rec.timer_begin(t, &label)?)),
                    None => None,
                };
                for w in wave {
                    let groups = [
                        (w.write.width() as u32).div_ceil(GROUP[0]),
                        (w.write.height() as u32).div_ceil(GROUP[1]),
                        1,
                    ];
                    stats.texels_written += w.write.width() as u64 * w.write.height() as u64;
                    rec.pass(kernel, &w.set).push(&w.push).dispatch(groups)?;
                }
                if let Some((t, q)) = query {
                    rec.timer_end(t, q);
                }
                stats.passes += wave.len();
                stats.waves += 1;
            }
            rec.submit_and_wait()?;
            for (i, page) in fresh.iter().enumerate() {
                page.front.set(front[i]);
                page.stale.set(stale[i]);
            }
            if let Some(t) = &self.timer {
                stats.add_waves(&t.results()?);
            }
        }
        Ok(())
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
        for id in before.keys().chain(after.keys()) {
            if before.get(id) != after.get(id) {
                self.changed.insert(*id);
            }
        }
    }

    /// Undoes the last stroke (after finishing every queued one); false if there is none.
    pub fn undo(&mut self) -> Result<bool> {
        self.pump(None)?;
        let before = self.versions();
        let done = self.history.undo(&mut self.pages);
        self.mark_swapped(before);
        Ok(done)
    }

    /// Bounds the GPU memory undo steps hold; the oldest steps are forgotten past it.
    pub fn set_undo_budget(&mut self, bytes: u64) {
        self.history.set_budget(bytes);
    }

    /// GPU memory the undo/redo steps hold (upper bound).
    pub fn undo_bytes(&self) -> u64 {
        self.history.held_bytes()
    }

    /// Strokes that can be undone now.
    pub fn undo_steps(&self) -> usize {
        self.history.can_undo()
    }

    /// Redoes the last undone stroke (after finishing every queued one); false if there is none.
    pub fn redo(&mut self) -> Result<bool> {
        self.pump(None)?;
        let before = self.versions();
        let done = self.history.redo(&mut self.pages);
        self.mark_swapped(before);
        Ok(done)
    }

    /// The whole document after every queued stroke, row-major (read back from the pages' front
    /// images).
    pub fn to_dense(&mut self) -> Result<Vec<f32>> {
        let d = self.desc;
        let mut out = vec![self.flat; d.width as usize * d.height as usize];
        for (id, heights) in self.page_heights()? {
            d.page_into_dense(&heights, id, &mut out);
        }
        Ok(out)
    }

    /// The heights of every page that holds memory (after every queued stroke), in page order;
    /// pages not listed are flat.
    pub fn page_heights(&mut self) -> Result<Vec<(PageId, Vec<f32>)>> {
        self.pump(None)?;
        let d = &self.desc;
        let mut out = Vec::with_capacity(self.pages.len());
        let entries: Vec<(&PageId, &Rc<GpuPage>)> = self.pages.iter().collect();
        for chunk in entries.chunks(64) {
            let texel = d.texel_bytes();
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

    /// A document of flat height `flat` whose listed pages hold `pages` (each the page's
    /// texels, row-major): the inverse of [`Self::page_heights`].
    pub fn from_pages(
        gpu: &Arc<Gpu>,
        desc: DocumentDesc,
        flat: f32,
        pages: &[(PageId, Vec<f32>)],
        tables: &NoiseTables,
    ) -> Result<Self> {
        let mut t = Self::new(gpu, desc, flat, tables)?;
        let texels = |id: PageId| {
            let r = desc.page_rect(id);
            r.width() as usize * r.height() as usize
        };
        t.upload_pages(pages.iter().map(|(id, heights)| {
            if id.x >= desc.pages_x() || id.y >= desc.pages_y() || heights.len() != texels(*id) {
                return Err(GpuError::usage(format!(
                    "page {},{} does not fit the document",
                    id.x, id.y
                )));
            }
            Ok((*id, heights.clone()))
        }))?;
        Ok(t)
    }
}

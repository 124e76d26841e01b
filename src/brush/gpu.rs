//! The brush engine on the GPU: batched ping-pong passes in waves over the pages of a field of the
//! page store, a budgeted stroke queue. The engine owns kernels and queued work, never pages: every
//! call that runs work takes `&mut` the field it paints ([`crate::pages::Field`]).
//!
//! * **Pages.** A page is a pair of storage images (front/back) with two ping-pong descriptor
//!   sets: set 0 reads image 0 and writes image 1, set 1 the reverse, so swapping roles is a
//!   matter of which set is bound ([`crate::pages::GpuPage`]); the engine binds them on first
//!   use.
//! * **Passes.** A stroke's instances are split into per-page lists (paper section 4); each list
//!   is applied in batches of up to `batch` instances per dispatch, in order. A pass writes the
//!   back image over the union of its own dirty rectangle and the previous pass's: before the
//!   pass the back image is stale exactly where the previous pass wrote, so afterwards it is a
//!   complete copy of the new state and no page is ever copied whole between passes.
//! * **Waves.** The k-th pass of every page a stroke touches runs in one wave behind one barrier
//!   (passes of different pages touch disjoint images).
//! * **Queue.** Strokes wait in a FIFO; [`BrushEngine::pump`] runs waves (or multi-tap instances)
//!   until a GPU time budget is spent, so a huge brush never holds a frame. A stroke's pages are
//!   prepared when it reaches the front, so it sees every stroke before it.
//! * **Undo.** A stroke asks the field for new versions of the pages it touches (copy-on-write)
//!   and commits them as one undo step when its last wave has run.

use super::error::{BrushError, Result};
use super::shared::{BrushInstance, BrushPass, SmoothPass};
use super::stamp::Stamp;
use super::{
    instances_reaching, level_texel, reach, touched_pages, BrushSettings, BrushType, Plane,
};
use crate::gpu::Submitter;
use crate::gpu::{
    shaders, vk, Access, BindingKind, Buffer, BufferDesc, ComputeKernel, DescriptorSet, Gpu,
    GpuTimer, Image, ImageDesc, PassTime, Recorder, Resource,
};
use crate::noise::{GpuNoise, NoiseTables};
use crate::pages::{
    DocumentDesc, Field, GpuPage, HeightFormat, PageError, PageId, PageStore, Rect,
};
use crate::shared_constants::{BRUSH_STAMP_ROWS, SMOOTH_MAX_BATCH};
use std::collections::HashMap;
use std::sync::Arc;

/// Instances per dispatch unless told otherwise (paper section 4).
pub const DEFAULT_BATCH: usize = 16;
/// Most instances one dispatch may take.
pub const MAX_BATCH: usize = 256;
/// Workgroup size of the brush kernels (pointwise_body.glsl, smooth_body.glsl).
const GROUP: [u32; 2] = [
    crate::shared_constants::BRUSH_GROUP_X,
    crate::shared_constants::BRUSH_GROUP_Y,
];
/// Texels an invocation of the pointwise kernel paints for `brush`, one below the other:
/// [`BRUSH_STAMP_ROWS`] for stamps of radius 256 and more (brush/pointwise_rows*.comp, when
/// `wide`), 1 elsewhere. Measured on an H200 (docs/PERF.md, "Pointwise brushes at radius 1024"),
/// stamps, µs an instance at batch 1 / 16, pages of 512, one texel against four: radius 1024,
/// 40.9 / 17.2 against 28.3 / 14.6; radius 256, 4.34 / 1.66 against 3.71 / 1.58; but radius 64,
/// 3.11 / 0.54 against 3.98 / 0.96 (a short rectangle leaves most of a 16 x 64 tile idle).
fn rows_per_invocation(brush: &BrushSettings, wide: bool) -> u32 {
    if wide && brush.brush == BrushType::Stamp && brush.radius >= 256.0 {
        BRUSH_STAMP_ROWS as u32
    } else {
        1
    }
}

/// Timed waves per submission.
const PASSES_PER_SUBMIT: usize = 1024;

const PAGE_BINDINGS: [BindingKind; 2] = [BindingKind::StorageImage, BindingKind::StorageImage];
const STROKE_BINDINGS: [BindingKind; 4] = [
    BindingKind::SampledImage,
    BindingKind::SampledImage,
    BindingKind::StorageBuffer,
    BindingKind::SampledImage,
];

/// The smooth kernels' set: the 3x3 pages' fronts, the back image written, the instances.
const SMOOTH_BINDINGS: [BindingKind; 11] = [
    BindingKind::StorageImage,
    BindingKind::StorageImage,
    BindingKind::StorageImage,
    BindingKind::StorageImage,
    BindingKind::StorageImage,
    BindingKind::StorageImage,
    BindingKind::StorageImage,
    BindingKind::StorageImage,
    BindingKind::StorageImage,
    BindingKind::StorageImage,
    BindingKind::StorageBuffer,
];

/// Set 2 of weighted kernels: the weight field's page.
const WEIGHT_BINDINGS: [BindingKind; 1] = [BindingKind::StorageImage];

/// (page format, brush, noise kind, tile culling, weighted, texels an invocation) of a pointwise
/// kernel.
type KernelKey = (HeightFormat, i32, i32, bool, bool, u32);

/// Per page: (first instance in the buffer, count, page-local dirty rectangle) of each batch.
type PageBatches = Vec<Vec<(u32, u32, Rect)>>;

/// A stroke being applied and how far its work got; its new page versions are the field's
/// working versions (in the order of the field's working ids).
struct ActiveStroke {
    /// The field it paints.
    field: String,
    brush: BrushSettings,
    instances: Vec<BrushInstance>,
    /// Per page: (first instance in the buffer, count, page-local dirty rectangle) of each batch.
    page_passes: PageBatches,
    instance_buf: Option<Buffer>,
    /// Stamp brushes: the stamp image.
    stamp_image: Option<Image>,
    level_target: f32,
    /// Weighted strokes: the weight field's name, and a page of its flat value (bound for its
    /// pages without memory).
    weight: Option<(String, Image)>,
    /// A continuation of the previous stroke (a stroke painted live, part by part): joins its
    /// undo step.
    join: bool,
    /// Units of work: waves (pointwise brushes) or instances (multi-tap brushes).
    units: usize,
    done: usize,
    stats: StrokeStats,
}

/// The page-local rectangles that units `range` of `stroke` wrote, per working page of `field`.
fn touched_rects(
    field: &Field,
    stroke: &ActiveStroke,
    range: std::ops::Range<usize>,
) -> Vec<(PageId, Rect)> {
    let d = field.desc();
    let ids = field.versions().working().0;
    if stroke.brush.brush.is_multitap() {
        let working: std::collections::HashSet<PageId> = ids.iter().copied().collect();
        let mut rects: std::collections::BTreeMap<PageId, Rect> = Default::default();
        for b in &stroke.instances[range] {
            let r = reach(b);
            for id in d.pages_in(&r).into_iter().filter(|id| working.contains(id)) {
                let p = d.page_rect(id);
                let local = r.intersect(&p).translate(-p.x0, -p.y0);
                let e = rects.entry(id).or_insert(Rect::EMPTY);
                *e = e.union(&local);
            }
        }
        rects.into_iter().collect()
    } else {
        ids.iter()
            .zip(&stroke.page_passes)
            .map(|(&id, passes)| {
                let waves = passes.get(range.start.min(passes.len())..range.end.min(passes.len()));
                let r = waves
                    .unwrap_or(&[])
                    .iter()
                    .fold(Rect::EMPTY, |acc, p| acc.union(&p.2));
                (id, r)
            })
            .filter(|(_, r)| !r.is_empty())
            .collect()
    }
}

/// What one [`BrushEngine::pump`] did.
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

/// A page-sized R32F image holding `flat` everywhere: the weight bound for pages of the weight
/// field without memory.
fn flat_weight_page(gpu: &Arc<Gpu>, side: u32, flat: f32) -> Result<Image> {
    let image = Image::new(
        gpu,
        "flat weight page",
        ImageDesc::new_2d(vk::Format::R32_SFLOAT, [side, side])
            .usage(vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::TRANSFER_DST),
    )?;
    let mut rec = Recorder::new(gpu)?;
    rec.clear_image(&image, flat);
    rec.image(&image, Access::ComputeStorageRead);
    rec.submit_and_wait()?;
    Ok(image)
}

/// Two page-local coordinates (< 2^16) in one word, x in the low half.
fn pack16(x: i32, y: i32) -> u32 {
    x as u32 | (y as u32) << 16
}

/// One planned smooth pass: its kernel, the images it binds, its set and push constants.
struct SmoothPlan<'p> {
    kernel: &'p ComputeKernel<SmoothPass>,
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

/// One queued stroke: the field it paints and what paints it.
#[derive(Clone, Debug)]
pub struct StrokeOrder {
    /// Name of the page-store field it paints.
    pub field: String,
    pub brush: BrushSettings,
    pub instances: Vec<BrushInstance>,
    /// Continues the previous stroke on the same field (same undo step, same level target).
    pub join: bool,
    /// Level brushes: the target height, when not the height under the first sample of the
    /// field painted (layers level toward the composite).
    pub level_target: Option<f32>,
    /// Flatten and ramp brushes: the plane, when not from the heights of the field painted
    /// (layers pull toward the composite's).
    pub plane: Option<Plane>,
    /// Level strokes on r32f fields: a field (same page grid, r32f) whose value multiplies each
    /// instance's weight texel by texel (the procedural mask brush: its rules' mask).
    pub weight: Option<String>,
}

impl StrokeOrder {
    /// A stroke of `brush` on `field`, its own undo step.
    pub fn new(field: &str, brush: &BrushSettings, instances: &[BrushInstance]) -> Self {
        Self {
            field: field.to_string(),
            brush: brush.clone(),
            instances: instances.to_vec(),
            join: false,
            level_target: None,
            plane: None,
            weight: None,
        }
    }
}

fn field_named<'s>(store: &'s mut PageStore, name: &str) -> Result<&'s mut Field> {
    store
        .field_mut(name)
        .ok_or_else(|| BrushError::NoField(name.to_string()))
}

/// The brush kernels, the stroke queue and the stroke under way.
pub struct BrushEngine {
    gpu: Arc<Gpu>,
    noise: GpuNoise,
    /// Pointwise kernels by (page format, brush, noise kind, tile culling, weighted).
    kernels: HashMap<KernelKey, ComputeKernel<BrushPass>>,
    /// Per page format and tiling (see [`SMOOTH_TILED_MOST_RADIUS`]).
    smooth_kernels: HashMap<(HeightFormat, bool), ComputeKernel<SmoothPass>>,
    batch: usize,
    /// Pointwise passes read and write the front image in place instead of ping-ponging.
    in_place: bool,
    /// Pointwise kernels cull the batch's instances per tile.
    tile_culling: bool,
    /// Stamps of radius 256 and more paint [`BRUSH_STAMP_ROWS`] texels an invocation.
    wide_stamps: bool,
    /// Times the page copies `Field::ensure_working` makes (waited for).
    timer: Option<GpuTimer>,
    /// Submits waves and uploads: waited for, or left running with frames in flight.
    submitter: Submitter,
    pub last_stroke: StrokeStats,
    queue: std::collections::VecDeque<StrokeOrder>,
    /// Level target of the last stroke, kept for its continuations.
    last_level_target: f32,
    last_plane: Plane,
    /// GPU time of instance uploads and copy-on-write page copies since the last pump report.
    copy_ns: f64,
    /// 1x1 placeholder bound as the stamp of brushes without one.
    no_stamp: Image,
    active: Option<ActiveStroke>,
}

impl BrushEngine {
    pub fn new(gpu: &Arc<Gpu>, tables: &NoiseTables) -> Result<Self> {
        let no_stamp = upload_stamp(
            gpu,
            &Stamp {
                width: 1,
                height: 1,
                values: vec![0.0],
                source: None,
            },
        )?;
        Ok(Self {
            gpu: gpu.clone(),
            noise: GpuNoise::new(gpu, tables)?,
            kernels: HashMap::new(),
            smooth_kernels: HashMap::new(),
            batch: DEFAULT_BATCH,
            in_place: false,
            tile_culling: true,
            wide_stamps: true,
            timer: GpuTimer::new(gpu, PASSES_PER_SUBMIT as u32)?,
            submitter: Submitter::new(gpu),
            last_stroke: StrokeStats::default(),
            queue: Default::default(),
            no_stamp,
            active: None,
            last_level_target: 0.0,
            last_plane: Plane::default(),
            copy_ns: 0.0,
        })
    }

    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// Instances per dispatch for pointwise brushes (1..=256).
    pub fn set_batch(&mut self, batch: usize) -> Result<()> {
        if !(1..=MAX_BATCH).contains(&batch) {
            return Err(BrushError::Batch {
                batch,
                max: MAX_BATCH,
            });
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

    /// Tile culling in pointwise kernels (on by default, used from batch 8 up): each
    /// workgroup first marks the batch's instances that reach it, and its texels test only
    /// those. Results are identical; off is kept for `scarp bench`'s comparison.
    pub fn set_tile_culling(&mut self, on: bool) {
        self.tile_culling = on;
    }

    /// Stamps of radius 256 and more paint [`BRUSH_STAMP_ROWS`] texels an invocation (on by
    /// default: faster, docs/PERF.md); off paints them one a texel. Results are identical;
    /// off is kept for the tests' comparison.
    pub fn set_wide_stamps(&mut self, on: bool) {
        self.wide_stamps = on;
    }

    /// Whether pointwise passes cull per tile now. Below batch 8 the marking pass and its
    /// barrier cost more than the tests they save (H200: 5-9% slower at batch 1, even at 4;
    /// 1.2-1.6x faster at 16 and 32; docs/PERF.md).
    fn culls(&self) -> bool {
        self.tile_culling && self.batch >= 8
    }

    fn kernel_key(&self, format: HeightFormat, brush: &BrushSettings, weighted: bool) -> KernelKey {
        // Raise and lower share a pipeline; the noise kind only matters to noise brushes.
        let (brush_index, kind_index) = brush.brush.kernel_key(brush.noise.kind);
        // Weighted strokes (level brushes) have one kernel, one texel an invocation.
        let rows = if weighted {
            1
        } else {
            rows_per_invocation(brush, self.wide_stamps)
        };
        (
            format,
            brush_index,
            kind_index,
            self.culls(),
            weighted,
            rows,
        )
    }

    fn kernel(&mut self, key: KernelKey) -> Result<&ComputeKernel<BrushPass>> {
        if !self.kernels.contains_key(&key) {
            let (format, brush, kind, cull, weighted, rows) = key;
            let wide = rows == BRUSH_STAMP_ROWS as u32;
            let shader = match (format, weighted) {
                (HeightFormat::R32f, false) if wide => &shaders::BRUSH_POINTWISE_ROWS_COMP,
                (HeightFormat::R16, false) if wide => &shaders::BRUSH_POINTWISE_ROWS_R16_COMP,
                (HeightFormat::R32f, false) => &shaders::BRUSH_POINTWISE_COMP,
                (HeightFormat::R16, false) => &shaders::BRUSH_POINTWISE_R16_COMP,
                (HeightFormat::R32f, true) => &shaders::BRUSH_POINTWISE_WEIGHTED_COMP,
                (HeightFormat::R16, true) => {
                    return Err(BrushError::Layer(
                        "weighted strokes paint r32f fields only".into(),
                    ))
                }
            };
            let sets: &[&[BindingKind]] = if weighted {
                &[&PAGE_BINDINGS, &STROKE_BINDINGS, &WEIGHT_BINDINGS]
            } else {
                &[&PAGE_BINDINGS, &STROKE_BINDINGS]
            };
            let k =
                ComputeKernel::with_sets(&self.gpu, shader, sets, &[brush, kind, i32::from(cull)])?;
            self.kernels.insert(key, k);
        }
        Ok(&self.kernels[&key])
    }

    /// Queues a stroke (FIFO). Nothing runs until [`Self::pump`]; its pages are prepared when it
    /// reaches the front, so it sees every stroke queued before it. With `join` it continues the
    /// previous stroke on its field (a stroke painted live, part by part: same undo step, same
    /// level target), so a stroke painted part by part ends bit-identical to the same instances
    /// applied as one stroke.
    pub fn enqueue(&mut self, order: StrokeOrder) {
        self.queue.push_back(order);
    }

    /// Strokes queued or in progress.
    pub fn pending_strokes(&self) -> usize {
        self.queue.len() + usize::from(self.active.is_some())
    }

    /// Runs queued work on `field`: waves of pointwise brushes, instances of multi-tap ones, in
    /// order. With a budget it stops once the measured GPU time of this call reaches `budget_ms`
    /// (at least one unit runs, and each submission is sized from the units measured so far), so
    /// a huge brush never holds a frame; `None` drains everything, and so does any budget on a
    /// queue without timestamps (nothing to measure against). Detached
    /// ([`Self::set_detached`]), the time is planned from the time per unit that earlier pumps'
    /// waves measured (one unit while nothing has been measured). Each stroke paints the field of
    /// `store` its order names.
    pub fn pump(&mut self, store: &mut PageStore, budget_ms: Option<f64>) -> Result<PumpReport> {
        let mut report = PumpReport::default();
        let budget_ns = budget_ms.map(|ms| ms * 1e6);
        // Detached, the waves are timed when they have finished: the report gives what earlier
        // pumps' waves took, and the budget is paced by their time per unit.
        let detached = self.submitter.detached;
        let finished = self.submitter.collect()?;
        if detached {
            report.gpu_ns = finished.work_ns;
            self.copy_ns += finished.copy_ns;
        }
        let mut per_unit_ns: Option<f64> = if detached {
            self.submitter.unit_ns
        } else {
            None
        };
        let mut planned_ns = 0.0;
        loop {
            let mut stroke = match self.active.take() {
                Some(s) => s,
                None => match self.queue.pop_front() {
                    Some(order) => {
                        let weight_flat = match &order.weight {
                            Some(n) => Some(
                                store
                                    .field(n)
                                    .ok_or_else(|| BrushError::NoField(n.clone()))?
                                    .flat(),
                            ),
                            None => None,
                        };
                        let field = field_named(store, &order.field)?;
                        self.activate(field, order, weight_flat)?
                    }
                    None => break,
                },
            };
            let left = stroke.units - stroke.done;
            let count = match (budget_ns, per_unit_ns) {
                (None, _) => left,
                (Some(_), None) => 1,
                (Some(b), Some(u)) => {
                    (((b - planned_ns) / u.max(1.0)).floor() as usize).clamp(1, left.max(1))
                }
            };
            let count = count.min(left);
            let before = stroke.stats.gpu_ns.unwrap_or(0.0);
            let range = stroke.done..stroke.done + count;
            // A weighted stroke's weight field is lent by the store while its waves record.
            let mut weight = match &stroke.weight {
                Some((n, _)) => Some(
                    store
                        .remove_field(n)
                        .ok_or_else(|| BrushError::NoField(n.clone()))?,
                ),
                None => None,
            };
            let recorded = self.record_units(store, &mut stroke, range, weight.as_mut());
            if let (Some((n, _)), Some(w)) = (&stroke.weight, weight) {
                store.insert_field(n, w)?;
            }
            recorded?;
            let field = field_named(store, &stroke.field)?;
            stroke.done += count;
            report.units += count;
            if detached {
                // Not measured yet: planned from the time per unit (unknown at first: one unit).
                match per_unit_ns {
                    Some(u) => planned_ns += u * count as f64,
                    None => planned_ns = f64::INFINITY,
                }
            } else {
                let spent = stroke.stats.gpu_ns.unwrap_or(0.0) - before;
                report.gpu_ns += spent;
                planned_ns += spent;
                if count > 0 {
                    per_unit_ns = Some(spent / count as f64);
                }
            }
            if stroke.done >= stroke.units {
                field.commit_versions(stroke.join);
                self.last_stroke = stroke.stats;
                report.strokes_finished += 1;
            } else {
                self.active = Some(stroke);
            }
            if budget_ns.is_some_and(|b| planned_ns >= b) {
                break;
            }
        }
        report.pending_strokes = self.pending_strokes();
        report.copy_ns = std::mem::take(&mut self.copy_ns);
        Ok(report)
    }

    /// Records units `range` of `stroke` and notes the texels they change (even when recording
    /// failed part way: some of those pages may be written).
    fn record_units(
        &mut self,
        store: &mut PageStore,
        stroke: &mut ActiveStroke,
        range: std::ops::Range<usize>,
        weight: Option<&mut Field>,
    ) -> Result<()> {
        let field = field_named(store, &stroke.field)?;
        let recorded = if stroke.brush.brush.is_multitap() {
            self.record_multitap(field, stroke, range.clone())
        } else {
            self.record_pointwise(field, weight, stroke, range.clone())
        };
        let touched = touched_rects(field, stroke, range);
        field.mark_changed_in(field.versions().working().0.to_vec(), &touched);
        recorded
    }

    /// Leaves the engine's submissions running instead of waiting for them (frames in flight:
    /// a pump then never waits for the frame the GPU is drawing). Stroke statistics then lack
    /// the waves' GPU times; [`PumpReport::gpu_ns`] gives those of earlier pumps as they finish.
    pub fn set_detached(&mut self, detached: bool) {
        self.submitter.detached = detached;
    }

    /// Prepares the stroke at the front of the queue: level target, per-page instance lists,
    /// new page versions (copy-on-write) and the instance upload.
    fn activate(
        &mut self,
        field: &mut Field,
        mut order: StrokeOrder,
        weight_flat: Option<f32>,
    ) -> Result<ActiveStroke> {
        let _p = crate::profile::scope("brush: activate");
        if order.weight.is_some()
            && (order.brush.brush != BrushType::Level || field.desc().format != HeightFormat::R32f)
        {
            return Err(BrushError::Layer(
                "only level strokes on r32f fields take a weight field".into(),
            ));
        }
        let level_target = self.level_target(field, &mut order)?;
        let StrokeOrder {
            field: field_name,
            brush,
            instances,
            join,
            weight,
            ..
        } = order;
        let desc = *field.desc();
        let ids = touched_pages(&desc, &instances);
        let (flat_list, page_passes) = self.page_batches(&desc, &ids, &instances);
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
        field.begin_versions(ids, join);
        // Multi-tap passes read the stroke's instances in stroke order; pointwise ones, per page.
        let instance_buf = if brush.brush.is_multitap() {
            self.upload_instances(&instances)?
        } else {
            self.upload_instances(&flat_list)?
        };
        let stamp_image = match (&brush.brush, &brush.stamp) {
            (BrushType::Stamp, Some(stamp)) => Some(upload_stamp(&self.gpu, stamp)?),
            _ => None,
        };
        let weight = match (weight, weight_flat) {
            (Some(name), Some(flat)) => {
                Some((name, flat_weight_page(&self.gpu, desc.page_size, flat)?))
            }
            _ => None,
        };
        Ok(ActiveStroke {
            field: field_name,
            brush,
            instances,
            page_passes,
            instance_buf,
            stamp_image,
            level_target,
            weight,
            join,
            units,
            done: 0,
            stats,
        })
    }

    /// The level target of a stroke: the height level brushes pull toward, or for flatten and
    /// ramp the height of the stroke's plane at the origin (their instances get its gradient);
    /// 0 for other brushes. Keeps the target and plane for the stroke's continuations.
    fn level_target(&mut self, field: &Field, order: &mut StrokeOrder) -> Result<f32> {
        let StrokeOrder {
            brush,
            instances,
            join,
            level_target,
            plane,
            ..
        } = order;
        let level_target = match (brush.brush, *level_target, level_texel(instances)) {
            (BrushType::Level, Some(t), _) => t,
            (BrushType::Level, None, _) if *join => self.last_level_target,
            (BrushType::Level, None, Some((x, y))) => field.height_at(x, y)?,
            _ => 0.0,
        };
        self.last_level_target = level_target;
        // Flatten and ramp: the plane's height at the origin goes where level's target goes,
        // its gradient into every instance's axis.
        let level_target = if brush.brush.is_plane() {
            let plane = match (*plane, *join) {
                (Some(p), _) => p,
                (None, true) => self.last_plane,
                (None, false) => Plane::of_stroke(brush, instances, |x, y| field.height_at(x, y))?
                    .unwrap_or_default(),
            };
            self.last_plane = plane;
            plane.mark(instances);
            plane.at_origin
        } else {
            level_target
        };
        Ok(level_target)
    }

    /// The instances reaching each of pages `ids`, concatenated in one list, and per page the
    /// (first instance in the list, count, page-local dirty rectangle) of each of its batches.
    fn page_batches(
        &self,
        desc: &DocumentDesc,
        ids: &[PageId],
        instances: &[BrushInstance],
    ) -> (Vec<BrushInstance>, PageBatches) {
        // Per-page instance lists, concatenated in one buffer.
        let mut flat_list: Vec<BrushInstance> = Vec::new();
        let mut page_passes: PageBatches = Vec::with_capacity(ids.len());
        for &id in ids {
            let r = desc.page_rect(id);
            let start = flat_list.len();
            flat_list.extend(instances_reaching(instances, &r));
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
        (flat_list, page_passes)
    }

    /// Copies a stroke's instance list into a GPU storage buffer (None for an empty list); the
    /// copy's GPU time counts with the page copies.
    fn upload_instances(&mut self, flat_list: &[BrushInstance]) -> Result<Option<Buffer>> {
        if flat_list.is_empty() {
            return Ok(None);
        }
        let bytes = std::mem::size_of_val(flat_list) as u64;
        let mut staging = Buffer::new(&self.gpu, "instances upload", BufferDesc::upload(bytes))?;
        staging.write(flat_list)?;
        let buf = Buffer::new(
            &self.gpu,
            "stroke instances",
            BufferDesc::new(bytes)
                .usage(vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST),
        )?;
        let timer = self.submitter.timer()?;
        let mut rec = Recorder::new(&self.gpu)?;
        let mut query = None;
        if let Some(t) = &timer {
            rec.reset_timer(t);
            query = Some((t, rec.timer_begin(t, "copies")?));
        }
        rec.buffer(&staging, Access::HostWrite);
        rec.copy_buffer(&staging, 0, &buf, 0, bytes);
        if let Some((t, q)) = query {
            rec.timer_end(t, q);
        }
        let ticket = self.submitter.send(rec)?;
        if let Some(times) = self.submitter.finish(ticket, timer, 0)? {
            self.copy_ns += times.iter().map(|p| p.gpu_ns).sum::<f64>();
        }
        Ok(Some(buf))
    }

    /// Records and runs waves `units` of a pointwise brush: wave k is the k-th batched pass of
    /// every page the stroke touches.
    fn record_pointwise(
        &mut self,
        field: &mut Field,
        mut weight: Option<&mut Field>,
        stroke: &mut ActiveStroke,
        units: std::ops::Range<usize>,
    ) -> Result<()> {
        let _p = crate::profile::scope("brush: waves");
        // Pages of a pointwise stroke read only themselves: groups of pages that fit the GPU
        // budget run every wave of `units` in turn (each page's passes keep their order).
        let d = *field.desc();
        let (ids, _) = field.versions().working();
        let all: Vec<usize> = (0..ids.len())
            .filter(|&i| units.start < stroke.page_passes[i].len())
            .collect();
        let pair = |i: &usize| d.page_rect(ids[*i]).texels() * d.texel_bytes() * 2;
        let groups = within_budget(&all, field.places().budgets().gpu, pair);
        for group in groups {
            self.copy_ns += field.ensure_working(&group, &[], self.timer.as_ref())?;
            if let Some(w) = weight.as_deref_mut() {
                let pages: Vec<PageId> = group
                    .iter()
                    .map(|&i| field.versions().working().0[i])
                    .collect();
                w.ensure_visible(&pages)?;
            }
            self.record_pointwise_pages(field, weight.as_deref(), stroke, units.clone(), &group)?;
        }
        Ok(())
    }

    /// Records and runs waves `units` of a pointwise brush over working pages `group` (on the
    /// GPU): wave k is the k-th batched pass of every page.
    fn record_pointwise_pages(
        &mut self,
        field: &Field,
        weight: Option<&Field>,
        stroke: &mut ActiveStroke,
        units: std::ops::Range<usize>,
        group: &[usize],
    ) -> Result<()> {
        let brush = stroke.brush.clone();
        let desc = *field.desc();
        let key = self.kernel_key(desc.format, &brush, weight.is_some());
        self.kernel(key)?;
        let kernel = &self.kernels[&key];
        let Some(instance_buf) = stroke.instance_buf.as_ref() else {
            return Ok(());
        };
        let bind = crate::profile::scope("brush: bind");
        let (perm, grad) = self.noise.tables();
        let stamp = stroke.stamp_image.as_ref().unwrap_or(&self.no_stamp);
        let stroke_set = kernel.bind_set(
            1,
            &[
                Resource::SampledImage(perm),
                Resource::SampledImage(grad),
                Resource::StorageBuffer(instance_buf),
                Resource::SampledImage(stamp),
            ],
        )?;
        // Waves: pass k of every page, which touch disjoint images, run together behind one
        // barrier; wave k+1 waits for wave k. Recording page after page instead would put a
        // barrier (a wait for all earlier compute work) between every two small dispatches.
        let fresh = resident_pages(field, group)?;
        let ids = field.versions().working().0;
        // Weighted strokes: each page's weight page (or the flat page), bound as set 2.
        let weights = match (weight, &stroke.weight) {
            (Some(w), Some((_, flat))) => weight_sets(kernel, w, flat, ids, group)?,
            _ => HashMap::new(),
        };
        let waves = PointwiseWaves {
            kernel,
            rows: key.5,
            stroke_set,
            base: pointwise_base(&brush, stroke.level_target, &desc),
            desc,
            ids,
            page_passes: &stroke.page_passes,
            group,
            fresh,
            weights,
            in_place: self.in_place,
            batch: self.batch,
            label: format!("brush {}", brush.brush.name()),
        };
        drop(bind);
        let wave_ids: Vec<usize> = units.collect();
        for chunk in wave_ids.chunks(PASSES_PER_SUBMIT) {
            let record = crate::profile::scope("brush: record");
            let timer = self.submitter.timer()?;
            let mut rec = Recorder::new(&self.gpu)?;
            if let Some(t) = &timer {
                rec.reset_timer(t);
            }
            rec.image(perm, Access::ComputeSampledRead);
            rec.image(grad, Access::ComputeSampledRead);
            rec.image(stamp, Access::ComputeSampledRead);
            rec.buffer(instance_buf, Access::ComputeStorageRead);
            for &wave in chunk {
                waves.record(&mut rec, timer.as_ref(), wave, &mut stroke.stats)?;
            }
            drop(record);
            let _submit = crate::profile::scope("brush: submit");
            let ticket = self.submitter.send(rec)?;
            if let Some(times) = self.submitter.finish(ticket, timer, chunk.len())? {
                stroke.stats.add_waves(&times);
            }
        }
        Ok(())
    }

    /// Makes the smooth kernel of `format`, tiled or one instance a pass, if not made yet.
    fn smooth_kernel(&mut self, format: HeightFormat, tiled: bool) -> Result<()> {
        if !self.smooth_kernels.contains_key(&(format, tiled)) {
            let k = ComputeKernel::new(
                &self.gpu,
                match (format, tiled) {
                    (HeightFormat::R32f, false) => &shaders::BRUSH_SMOOTH_COMP,
                    (HeightFormat::R16, false) => &shaders::BRUSH_SMOOTH_R16_COMP,
                    (HeightFormat::R32f, true) => &shaders::BRUSH_SMOOTH_TILED_COMP,
                    (HeightFormat::R16, true) => &shaders::BRUSH_SMOOTH_TILED_R16_COMP,
                },
                &SMOOTH_BINDINGS,
                &[],
            )?;
            self.smooth_kernels.insert((format, tiled), k);
        }
        Ok(())
    }

    /// Records and runs a multi-tap brush (smooth/contrast): a wave per batch of up to
    /// `min(batch, SMOOTH_MAX_BATCH)` consecutive instances of at most
    /// [`SMOOTH_TILED_MOST_RADIUS`] (tiled), or per larger instance, each of its pages reading
    /// the 3x3 neighbourhood of page fronts so taps cross page borders. Runs of instances whose
    /// pages (and neighbours) fit the GPU budget are brought onto the GPU and recorded together.
    fn record_multitap(
        &mut self,
        field: &mut Field,
        stroke: &mut ActiveStroke,
        units: std::ops::Range<usize>,
    ) -> Result<()> {
        let d = *field.desc();
        let (ids, _) = field.versions().working();
        let index: HashMap<PageId, usize> =
            ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
        // Per instance: the working pages it writes and every page those read.
        let needs: Vec<(Vec<usize>, Vec<PageId>)> = stroke.instances[units.clone()]
            .iter()
            .map(|b| {
                let own: Vec<usize> = d
                    .pages_in(&reach(b))
                    .iter()
                    .filter_map(|id| index.get(id).copied())
                    .collect();
                let mut read: Vec<PageId> = own
                    .iter()
                    .flat_map(|&i| d.neighbourhood(ids[i]))
                    .filter(|n| index.contains_key(n) || field.versions().page(*n).is_some())
                    .collect();
                read.sort_unstable();
                read.dedup();
                (own, read)
            })
            .collect();
        let pair = |id: &PageId| d.page_rect(*id).texels() * d.texel_bytes() * 2;
        let mut first = 0;
        while first < needs.len() {
            // The longest run from `first` whose pages fit the budget (at least one instance).
            let mut pages: std::collections::BTreeSet<PageId> = Default::default();
            let mut end = first;
            while end < needs.len() && end - first < PASSES_PER_SUBMIT {
                let more: Vec<PageId> = needs[end]
                    .1
                    .iter()
                    .filter(|id| !pages.contains(id))
                    .copied()
                    .collect();
                let bytes: u64 = pages.iter().chain(&more).map(pair).sum();
                if end > first && field.places().budgets().gpu.is_some_and(|b| bytes > b) {
                    break;
                }
                pages.extend(more);
                end += 1;
            }
            let own: Vec<usize> = pages
                .iter()
                .filter_map(|id| index.get(id).copied())
                .collect();
            let read: Vec<PageId> = pages.iter().copied().collect();
            self.copy_ns += field.ensure_working(&own, &read, self.timer.as_ref())?;
            let run = units.start + first..units.start + end;
            self.record_multitap_run(field, stroke, run, &index)?;
            first = end;
        }
        Ok(())
    }

    /// Records and runs multi-tap instances `run`, whose pages are on the GPU.
    fn record_multitap_run(
        &mut self,
        field: &Field,
        stroke: &mut ActiveStroke,
        run: std::ops::Range<usize>,
        index: &HashMap<PageId, usize>,
    ) -> Result<()> {
        // The tiled kernel's workgroup is its whole tile (32x32 invocations): on devices that
        // allow fewer it is never made, and every instance runs one a pass (a batch of 0).
        let tiles = self.gpu.info().max_compute_workgroup_invocations >= SMOOTH_TILE_INVOCATIONS;
        let batch = match tiles {
            true => self.batch.min(SMOOTH_MAX_BATCH as usize),
            false => 0,
        };
        let ActiveStroke {
            brush,
            instances,
            stats,
            instance_buf,
            ..
        } = stroke;
        let brush = &*brush;
        let d = *field.desc();
        self.smooth_kernel(d.format, false)?;
        if tiles {
            self.smooth_kernel(d.format, true)?;
        }
        let single = &self.smooth_kernels[&(d.format, false)];
        let tiled = match tiles {
            true => &self.smooth_kernels[&(d.format, true)],
            false => single,
        };
        let kernels = [single, tiled];
        let label = format!("brush {}", brush.brush.name());
        let Some(instance_buf) = instance_buf.as_ref() else {
            return Ok(());
        };
        let chunk = &instances[run.clone()];
        let mine: Vec<usize> = {
            let mut m: Vec<usize> = chunk
                .iter()
                .flat_map(|b| d.pages_in(&reach(b)))
                .filter_map(|id| index.get(&id).copied())
                .collect();
            m.sort_unstable();
            m.dedup();
            m
        };
        let fresh = resident_pages(field, &mine)?;
        // Plan the run's waves first (descriptor sets must outlive the recording), following
        // the fronts' flips on copies of the pages' state.
        let mut planner = SmoothPlanner {
            field,
            kernels,
            brush,
            index,
            desc: d,
            instances: instance_buf,
            front: fresh.iter().map(|(&i, p)| (i, p.front_index())).collect(),
            stale: fresh.iter().map(|(&i, p)| (i, p.stale())).collect(),
            fresh,
        };
        let plan = smooth_batches(instances, run, batch)
            .into_iter()
            .map(|(r, tiled)| planner.plan_wave(r.start, &instances[r], tiled))
            .collect::<Result<Vec<_>>>()?;

        let timer = self.submitter.timer()?;
        let mut rec = Recorder::new(&self.gpu)?;
        if let Some(t) = &timer {
            rec.reset_timer(t);
        }
        rec.buffer(instance_buf, Access::ComputeStorageRead);
        record_smooth_waves(&mut rec, timer.as_ref(), &plan, &label, batch, stats)?;
        let ticket = self.submitter.send(rec)?;
        for (i, page) in &planner.fresh {
            page.set_front(planner.front[i]);
            page.set_stale(planner.stale[i]);
        }
        if let Some(times) = self.submitter.finish(ticket, timer, plan.len())? {
            stats.add_waves(&times);
        }
        Ok(())
    }
}

/// The push constants every pass of a pointwise stroke shares (each pass sets its page, its
/// rectangle and its batch).
fn pointwise_base(brush: &BrushSettings, level_target: f32, desc: &DocumentDesc) -> BrushPass {
    BrushPass {
        page_origin: [0, 0],
        rect_min_packed: 0,
        rect_size_packed: 0,
        first_instance: 0,
        instance_count: 0,
        falloff: brush.falloff.index(),
        falloff_power: brush.falloff_power,
        level_target: match brush.brush {
            BrushType::Terrace => brush.terrace_sharpness,
            _ => level_target,
        },
        noise: brush.noise.params(),
        brush_param: match brush.brush {
            BrushType::Stamp => brush.stamp_scale,
            BrushType::Terrace => brush.terrace_height,
            _ => brush.dir_ratio,
        },
        height_min: desc.height_min,
        height_range: desc.height_range(),
    }
}

/// Per working page of `group`: its page of the weight field (`flat` where that field has none
/// in memory) and the set binding it as set 2 of `kernel`.
fn weight_sets<'a>(
    kernel: &ComputeKernel<BrushPass>,
    weight: &'a Field,
    flat: &'a Image,
    ids: &[PageId],
    group: &[usize],
) -> Result<HashMap<usize, (&'a Image, DescriptorSet)>> {
    group
        .iter()
        .map(|&i| {
            let image = weight.visible_image(ids[i]).unwrap_or(flat);
            Ok((
                i,
                (image, kernel.bind_set(2, &[Resource::StorageImage(image)])?),
            ))
        })
        .collect()
}

/// What the waves of a pointwise stroke over one group of working pages bind and read.
struct PointwiseWaves<'a> {
    kernel: &'a ComputeKernel<BrushPass>,
    /// Texels an invocation of the kernel paints ([`rows_per_invocation`]).
    rows: u32,
    /// Set 1: the noise tables, the instances and the stamp.
    stroke_set: DescriptorSet,
    /// Push constants every pass shares.
    base: BrushPass,
    desc: DocumentDesc,
    /// The field's working page ids.
    ids: &'a [PageId],
    /// Per working page: (first instance, count, page-local dirty rectangle) of each batch.
    page_passes: &'a [Vec<(u32, u32, Rect)>],
    /// The working pages the waves paint.
    group: &'a [usize],
    /// Their GPU pages.
    fresh: HashMap<usize, &'a GpuPage>,
    /// Weighted strokes: each page's weight image and the set binding it (set 2).
    weights: HashMap<usize, (&'a Image, DescriptorSet)>,
    in_place: bool,
    batch: usize,
    label: String,
}

impl PointwiseWaves<'_> {
    /// Records wave `wave`: the accesses of every page with a pass in it behind one barrier,
    /// then those passes, timed together; adds them to `stats`.
    fn record<'r>(
        &'r self,
        rec: &mut Recorder<'r>,
        timer: Option<&'r GpuTimer>,
        wave: usize,
        stats: &mut StrokeStats,
    ) -> Result<()> {
        let active: Vec<usize> = self
            .group
            .iter()
            .copied()
            .filter(|&i| wave < self.page_passes[i].len())
            .collect();
        for &i in &active {
            if let Some((image, _)) = self.weights.get(&i) {
                rec.image(image, Access::ComputeStorageRead);
            }
            if self.in_place {
                rec.image(self.fresh[&i].front(), Access::ComputeStorageReadWrite);
            } else {
                rec.image(self.fresh[&i].front(), Access::ComputeStorageRead);
                rec.image(self.fresh[&i].back(), Access::ComputeStorageWrite);
            }
        }
        rec.flush_barriers();
        let query = match timer {
            Some(t) => Some((t, rec.timer_begin(t, &self.label)?)),
            None => None,
        };
        let (mut wave_texels, mut wave_instances) = (0u64, 0u32);
        for &i in &active {
            let (texels, instances) = self.record_pass(rec, i, wave)?;
            wave_instances += instances;
            wave_texels += texels;
        }
        if let Some((t, q)) = query {
            rec.timer_end(t, q);
            t.note(
                q,
                wave_args(self.batch, wave_instances, active.len(), wave_texels),
            );
        }
        stats.texels_written += wave_texels;
        stats.passes += active.len();
        stats.waves += 1;
        Ok(())
    }

    /// Records pass `wave` of working page `i` (its accesses already declared) and moves the
    /// page's front and stale rectangle on; returns the texels it writes and its instances.
    fn record_pass<'r>(
        &'r self,
        rec: &mut Recorder<'r>,
        i: usize,
        wave: usize,
    ) -> Result<(u64, u32)> {
        let page = self.fresh[&i];
        let r = self.desc.page_rect(self.ids[i]);
        let (first, count, dirty) = self.page_passes[i][wave];
        // Ping-pong passes also bring the back image up to date where the previous
        // pass wrote.
        let write = if self.in_place {
            dirty
        } else {
            dirty.union(&page.stale())
        };
        let push = BrushPass {
            page_origin: [r.x0, r.y0],
            rect_min_packed: pack16(write.x0, write.y0),
            rect_size_packed: pack16(write.width(), write.height()),
            first_instance: first,
            instance_count: count,
            ..self.base
        };
        let groups = [
            (write.width() as u32).div_ceil(GROUP[0]),
            (write.height() as u32).div_ceil(GROUP[1] * self.rows),
            1,
        ];
        let texels = write.width() as u64 * write.height() as u64;
        // (read, written) image pairs bound as the kernel's set 0.
        let sets = page.sets(|read: &Image, write: &Image| {
            self.kernel.bind_set(
                0,
                &[Resource::StorageImage(read), Resource::StorageImage(write)],
            )
        })?;
        let set = if self.in_place {
            &sets.in_place[page.front_index()]
        } else {
            &sets.ping_pong[page.front_index()]
        };
        match self.weights.get(&i) {
            Some((_, weight_set)) => {
                rec.pass_sets(self.kernel, &[set, &self.stroke_set, weight_set])
            }
            None => rec.pass_sets(self.kernel, &[set, &self.stroke_set]),
        }
        .push(&push)
        .dispatch(groups)?;
        if self.in_place {
            // The back image now lacks this rectangle too.
            page.set_stale(page.stale().union(&dirty));
        } else {
            page.flip();
            page.set_stale(dirty);
        }
        Ok((texels, count))
    }
}

/// Instances of a smooth or contrast stroke with at most this radius run tiled, up to
/// [`SMOOTH_MAX_BATCH`] a pass; larger ones one a pass. Measured on an H100 (docs/PERF.md), µs
/// an instance, tiled at batch 1 / 16 against one a pass: radius 64, about 5.0 / 1.35 against
/// 5.65; radius 256, 12.6 / 8.7 against 9.2; radius 1024, 127 / 91 against 55.
pub const SMOOTH_TILED_MOST_RADIUS: f32 = 128.0;

/// Invocations of the tiled smooth kernel's workgroup: its 16x16 texels and a halo of
/// [`SMOOTH_MAX_BATCH`] around them. Devices that allow fewer run every instance one a pass.
const SMOOTH_TILE_INVOCATIONS: u32 = (crate::shared_constants::BRUSH_GROUP_X
    + 2 * SMOOTH_MAX_BATCH as u32)
    * (crate::shared_constants::BRUSH_GROUP_Y + 2 * SMOOTH_MAX_BATCH as u32);

/// The waves of smooth instances `run` (indices into `instances`): consecutive instances of at
/// most [`SMOOTH_TILED_MOST_RADIUS`], up to `batch` together, are tiled (true); each larger one
/// is a wave of its own, and so is every instance when `batch` is 0 (no tiles). Each instance's
/// kernel depends on the instance alone, so how a stroke is cut into runs and batches never
/// changes a height.
fn smooth_batches(
    instances: &[BrushInstance],
    run: std::ops::Range<usize>,
    batch: usize,
) -> Vec<(std::ops::Range<usize>, bool)> {
    let mut out: Vec<(std::ops::Range<usize>, bool)> = Vec::new();
    for i in run {
        let tiled = batch > 0 && instances[i].radius <= SMOOTH_TILED_MOST_RADIUS;
        match out.last_mut() {
            Some((r, true)) if tiled && r.len() < batch => r.end = i + 1,
            _ => out.push((i..i + 1, tiled)),
        }
    }
    out
}

/// Plans the waves of a multi-tap run (one per batch of instances): what each pass binds,
/// following the fronts' flips on copies of the pages' state.
struct SmoothPlanner<'a> {
    field: &'a Field,
    /// One instance a pass, and tiled (one instance a pass again where the device has no tiles:
    /// then no wave is planned tiled).
    kernels: [&'a ComputeKernel<SmoothPass>; 2],
    brush: &'a BrushSettings,
    /// The stroke's instances, in stroke order.
    instances: &'a Buffer,
    /// Index of each of the field's working page ids.
    index: &'a HashMap<PageId, usize>,
    desc: DocumentDesc,
    /// The GPU pages of the run's working pages.
    fresh: HashMap<usize, &'a GpuPage>,
    /// Per page of the run: its front image after the waves planned so far.
    front: HashMap<usize, usize>,
    /// Per page of the run: where its back image is stale after the waves planned so far.
    stale: HashMap<usize, Rect>,
}

impl<'a> SmoothPlanner<'a> {
    /// Plans the wave of `batch`, the stroke's instances from `first` (one unless `tiled`): a
    /// pass on every working page one of them reaches, applying all of them.
    fn plan_wave(
        &mut self,
        first: usize,
        batch: &[BrushInstance],
        tiled: bool,
    ) -> Result<Vec<SmoothPlan<'a>>> {
        let ids = self.field.versions().working().0;
        let pages: std::collections::BTreeSet<usize> = batch
            .iter()
            .flat_map(|b| self.desc.pages_in(&reach(b)))
            .filter_map(|id| self.index.get(&id).copied())
            .collect();
        let mut wave = Vec::with_capacity(pages.len());
        let mut dirties = Vec::with_capacity(pages.len());
        for &i in &pages {
            let r = self.desc.page_rect(ids[i]);
            let dirty = batch
                .iter()
                .fold(Rect::EMPTY, |acc, b| acc.union(&reach(b).intersect(&r)))
                .translate(-r.x0, -r.y0);
            wave.push(self.plan_pass(first, batch.len(), tiled, i, dirty)?);
            dirties.push((i, dirty));
        }
        // Every page of the wave read the fronts as they were before it.
        for (i, dirty) in dirties.drain(..) {
            self.front.insert(i, 1 - self.front[&i]);
            self.stale.insert(i, dirty);
        }
        Ok(wave)
    }

    /// Plans the pass of the `count` instances from `first` on working page `i`, whose
    /// page-local rectangle `dirty` they change: the images it binds, its set and its push
    /// constants.
    fn plan_pass(
        &self,
        first: usize,
        count: usize,
        tiled: bool,
        i: usize,
        dirty: Rect,
    ) -> Result<SmoothPlan<'a>> {
        let kernel = self.kernels[usize::from(tiled)];
        let d = &self.desc;
        let id = self.field.versions().working().0[i];
        let r = d.page_rect(id);
        let (bound, mask) = self.neighbourhood(i, id)?;
        let back = self.fresh[&i].image(1 - self.front[&i]);
        let mut resources: Vec<Resource> = bound
            .iter()
            .map(|&img| Resource::StorageImage(img))
            .collect();
        resources.push(Resource::StorageImage(back));
        resources.push(Resource::StorageBuffer(self.instances));
        let set = kernel.bind(&resources)?;
        let write = dirty.union(&self.stale[&i]);
        let push = SmoothPass {
            first_instance: first as u32,
            instance_count: count as u32,
            page_origin: [r.x0, r.y0],
            self_size: [r.width(), r.height()],
            doc_size: [d.width as i32, d.height as i32],
            rect_min: [write.x0, write.y0],
            rect_size: [write.width(), write.height()],
            page_size: d.page_size as i32,
            falloff: self.brush.falloff.index(),
            falloff_power: self.brush.falloff_power,
            flat_height: self.field.flat(),
            present_mask: mask,
            height_min: d.height_min,
            height_range: d.height_range(),
        };
        Ok(SmoothPlan {
            kernel,
            bound,
            back,
            set,
            push,
            write,
        })
    }

    /// The front images of the 3x3 pages around page `id` (working page `i`), row by row, and
    /// the mask of those that exist; a missing one is bound as the page's own front.
    fn neighbourhood(&self, i: usize, id: PageId) -> Result<(Vec<&'a Image>, u32)> {
        let d = &self.desc;
        let field = self.field;
        let own_front = self.fresh[&i].image(self.front[&i]);
        let mut bound: Vec<&Image> = Vec::with_capacity(9);
        let mut mask = 0u32;
        for n in 0..9i32 {
            let (nx, ny) = (id.x as i32 + n % 3 - 1, id.y as i32 + n / 3 - 1);
            let inside = nx >= 0 && ny >= 0 && nx < d.pages_x() as i32 && ny < d.pages_y() as i32;
            let nid = PageId {
                x: nx.max(0) as u32,
                y: ny.max(0) as u32,
            };
            // Its new version if the stroke touches it, else the document's, else flat.
            let img = match (inside, self.index.get(&nid)) {
                (false, _) => None,
                (true, Some(&j)) => Some(
                    field
                        .working_page(j)
                        .ok_or(PageError::NotResident { x: nid.x, y: nid.y })?
                        .image(*self.front.get(&j).unwrap_or(&0)),
                ),
                (true, None) => match field.versions().page(nid) {
                    Some(v) => Some(
                        field
                            .places()
                            .gpu_page(v)
                            .ok_or(PageError::NotResident { x: nid.x, y: nid.y })?
                            .front(),
                    ),
                    None => None,
                },
            };
            if img.is_some() {
                mask |= 1 << n;
            }
            bound.push(img.unwrap_or(own_front));
        }
        Ok((bound, mask))
    }
}

/// Records the planned waves of a multi-tap run: each wave's accesses behind one barrier, then
/// its passes, timed together; adds them to `stats`.
fn record_smooth_waves<'r>(
    rec: &mut Recorder<'r>,
    timer: Option<&'r GpuTimer>,
    plan: &'r [Vec<SmoothPlan<'r>>],
    label: &str,
    batch: usize,
    stats: &mut StrokeStats,
) -> Result<()> {
    for wave in plan {
        for w in wave {
            for img in &w.bound {
                rec.image(img, Access::ComputeStorageRead);
            }
            rec.image(w.back, Access::ComputeStorageWrite);
        }
        rec.flush_barriers();
        let query = match timer {
            Some(t) => Some((t, rec.timer_begin(t, label)?)),
            None => None,
        };
        for w in wave {
            let groups = [
                (w.write.width() as u32).div_ceil(GROUP[0]),
                (w.write.height() as u32).div_ceil(GROUP[1]),
                1,
            ];
            stats.texels_written += w.write.width() as u64 * w.write.height() as u64;
            rec.pass(w.kernel, &w.set).push(&w.push).dispatch(groups)?;
        }
        if let Some((t, q)) = query {
            rec.timer_end(t, q);
            let texels = wave.iter().map(|w| w.write.texels()).sum::<u64>();
            let instances = wave.first().map_or(0, |w| w.push.instance_count);
            t.note(q, wave_args(batch, instances, wave.len(), texels));
        }
        stats.passes += wave.len();
        stats.waves += 1;
    }
    Ok(())
}

/// What a trace shows with a wave: batch size, instances, pages and texels written.
fn wave_args(batch: usize, instances: u32, pages: usize, texels: u64) -> String {
    format!(r#"{{"batch":{batch},"instances":{instances},"pages":{pages},"texels":{texels}}}"#)
}

/// Splits `items` into consecutive groups whose `bytes` sum to at most `budget` (one item per
/// group at least; with no budget, one group).
fn within_budget<T: Copy>(
    items: &[T],
    budget: Option<u64>,
    bytes: impl Fn(&T) -> u64,
) -> Vec<Vec<T>> {
    let Some(budget) = budget else {
        return vec![items.to_vec()];
    };
    let mut groups: Vec<Vec<T>> = Vec::new();
    let mut held = 0;
    for item in items {
        let b = bytes(item);
        match groups.last_mut() {
            Some(g) if held + b <= budget => {
                g.push(*item);
                held += b;
            }
            _ => {
                groups.push(vec![*item]);
                held = b;
            }
        }
    }
    groups
}

/// The GPU pages of working versions `indices` (which must be on the GPU).
fn resident_pages<'f>(field: &'f Field, indices: &[usize]) -> Result<HashMap<usize, &'f GpuPage>> {
    let ids = field.versions().working().0;
    indices
        .iter()
        .map(|&i| {
            let page = field.working_page(i).ok_or(PageError::NotResident {
                x: ids[i].x,
                y: ids[i].y,
            })?;
            Ok((i, page))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_smooth_instances_batch_and_large_ones_run_alone() {
        let at = |radius: f32| BrushInstance {
            center: [0.0, 0.0],
            radius,
            inner_radius: 0.0,
            strength: 1.0,
            direction: 0.0,
            axis: [1.0, 0.0],
        };
        let small = SMOOTH_TILED_MOST_RADIUS;
        let large = SMOOTH_TILED_MOST_RADIUS + 1.0;
        let list: Vec<BrushInstance> = [small, small, small, large, large, small, small]
            .into_iter()
            .map(at)
            .collect();
        assert_eq!(
            smooth_batches(&list, 0..7, 2),
            vec![
                (0..2, true),
                (2..3, true),
                (3..4, false),
                (4..5, false),
                (5..7, true)
            ]
        );
        // A run starting mid-stroke batches from its own start.
        assert_eq!(smooth_batches(&list, 1..3, 8), vec![(1..3, true)]);
        // No tiles: every instance alone.
        assert_eq!(
            smooth_batches(&list, 0..3, 0),
            vec![(0..1, false), (1..2, false), (2..3, false)]
        );
    }
}

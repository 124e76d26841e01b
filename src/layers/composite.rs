//! The composite on the GPU, per dirty page: `layers/load.comp` loads a page's source (the base,
//! or the cached composite of the layers below the selected one) into an r32f scratch image,
//! folds each visible layer above it in turn, and stores the result into the destination page
//! (quantized there for r16 documents). The [`Compositor`] follows its input fields by epoch,
//! like the renderer follows the height field, so a stroke, an undo or a page-in of any input
//! recomposites exactly the pages whose values changed.
//!
//! **The cache below the selection.** While a layer k is selected, the fold of the base and
//! the visible layers below k is kept in a derived field ([`BELOW`]); a page whose inputs changed
//! only at or above k is folded from it (1 load, the visible layers from k up, 1 store) instead
//! of from the base. Every step writes its f32 result to the scratch image, so a page folded
//! from the cache is bit-identical to one folded from the base.

use super::shared::{BlendPush, FoldPush, RulesPush, BLEND_LAYERS};
use super::stack::{fold_texel, Layer, Part, Stack};
use crate::gpu::shaders;
use crate::gpu::{
    vk, Access, BindingKind, ComputeKernel, DescriptorSet, Gpu, GpuTimer, Image, ImageDesc,
    Recorder, Resource,
};
use crate::pages::geometry::NEIGHBOURHOOD;
use crate::pages::{
    field, DocumentDesc, Field, HeightFormat, PageError, PageId, PageStore, HEIGHT,
};
use crate::shared_constants as k;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

type Result<T, E = PageError> = std::result::Result<T, E>;

/// The field holding the base once a document has layers (`height` then holds the composite).
pub const BASE_FIELD: &str = "base";
/// The derived field caching the fold of the layers below the selected one.
pub const BELOW: &str = "layers.below";

/// Pages folded per submission (each needs a scratch image).
const PAGES_PER_SUBMIT: usize = 16;

const FOLD_BINDINGS: [BindingKind; 2] = [BindingKind::StorageImage; 2];
/// Scratch, value/alpha/mask of each layer, source, destination.
const BLEND_BINDINGS: [BindingKind; 3 + 3 * BLEND_LAYERS] =
    [BindingKind::StorageImage; 3 + 3 * BLEND_LAYERS];
/// `present` bit of a blend pass's source page.
const SOURCE_BIT: u32 = 1 << (3 * BLEND_LAYERS);

/// A layer's value, alpha and mask fields (None: the store lacks it).
type Inputs<'f> = [Option<&'f Field>; 3];

/// One dispatch of a composite: its kernel, push constants and images by binding.
enum Step<'a> {
    /// Load (binding 1 read) or store (binding 1 written).
    Fold {
        kernel: &'a ComputeKernel<FoldPush>,
        push: FoldPush,
        images: [&'a Image; 2],
        store: bool,
    },
    /// A blend pass; `from`: it reads the source page, `to`: it writes the destination page
    /// (else the scratch image, both ways).
    Blend {
        push: BlendPush,
        images: Vec<&'a Image>,
        from: bool,
        to: bool,
    },
}

/// What a composite pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CompositeStats {
    /// Pages folded into the composite (and into the cache).
    pub pages: usize,
    pub cache_pages: usize,
    /// Layer blends run (one per page and visible layer folded).
    pub blends: usize,
    /// GPU time of the folds, when timestamps are supported.
    pub gpu_ns: f64,
}

impl CompositeStats {
    fn add(&mut self, o: CompositeStats) {
        self.pages += o.pages;
        self.cache_pages += o.cache_pages;
        self.blends += o.blends;
        self.gpu_ns += o.gpu_ns;
    }
}

/// A layer as the fold sees it: its mode and weight and its three fields.
#[derive(Clone, Debug, PartialEq)]
struct FoldLayer {
    mode: super::Mode,
    weight: f32,
    fields: [String; 3],
}

impl FoldLayer {
    fn of(l: &Layer) -> Self {
        Self {
            mode: l.mode,
            weight: l.weight(),
            fields: Part::ALL.map(|p| l.field(p)),
        }
    }
}

/// Which layers the composite folds, and where the cache splits them.
#[derive(Clone, Debug, PartialEq)]
struct Plan {
    /// Visible layers with weight above 0, bottom first.
    layers: Vec<FoldLayer>,
    /// Layers `..split` are folded into the cache (0: no cache).
    split: usize,
}

impl Plan {
    fn of(stack: &Stack) -> Self {
        let visible = |l: &&Layer| l.weight() > 0.0;
        let layers: Vec<FoldLayer> = stack
            .layers
            .iter()
            .filter(visible)
            .map(FoldLayer::of)
            .collect();
        // The selected layer's place among the folded ones (hidden layers fold nothing).
        let split = stack
            .selected_index()
            .map_or(0, |i| stack.layers[..i].iter().filter(visible).count());
        Self { layers, split }
    }

    fn inputs(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = &str> {
        self.layers[range]
            .iter()
            .flat_map(|l| l.fields.iter().map(String::as_str))
    }
}

/// The flat value of field `name` (0 where the store lacks it).
fn flat_of(store: &PageStore, name: &str) -> f32 {
    store.field(name).map_or(0.0, Field::flat)
}

/// `layers` folded onto height `h` with their fields' flat values: what the fold gives where no
/// input holds a page.
fn fold_flats(store: &PageStore, layers: &[FoldLayer], h: f32) -> f32 {
    fold_texel(
        h,
        layers.iter().map(|l| {
            (
                l.mode,
                l.weight,
                [0, 1, 2].map(|i| flat_of(store, &l.fields[i])),
            )
        }),
    )
}

/// The pages some field of `names` holds, in page order.
fn held_pages<'n>(store: &PageStore, names: impl IntoIterator<Item = &'n str>) -> Vec<PageId> {
    let mut ids = BTreeSet::new();
    for n in names {
        if let Some(f) = store.field(n) {
            ids.extend(f.versions().by_page().map(|(id, _)| id));
        }
    }
    ids.into_iter().collect()
}

/// Folds layers into the composite, following its inputs.
pub struct Compositor {
    gpu: Arc<Gpu>,
    /// r32f kernels: load, store.
    fold: [ComputeKernel<FoldPush>; 2],
    /// Blend passes by `from | to << 1` (scratch or source in, scratch or destination out).
    blend: [ComputeKernel<BlendPush>; 4],
    /// r16 kernels: load, store (of r16 bases and composites).
    fold_r16: Option<[ComputeKernel<FoldPush>; 2]>,
    /// Bound where an input has no page (never read: its bit in `present` is off).
    dummy: Image,
    scratch: Vec<Image>,
    /// Epoch of each input field the composite has caught up with.
    seen: HashMap<String, u64>,
    /// The plan the composite (and cache) show; None: everything is stale.
    shown: Option<Plan>,
    timer: Option<GpuTimer>,
    /// With frames in flight: folds are submitted without waiting (and not timed).
    pub detached: bool,
    /// Totals since made (benchmarks read them).
    pub totals: CompositeStats,
}

fn storage_r32(gpu: &Arc<Gpu>, name: &str, extent: [u32; 2]) -> crate::gpu::Result<Image> {
    Image::new(
        gpu,
        name,
        ImageDesc::new_2d(vk::Format::R32_SFLOAT, extent).usage(vk::ImageUsageFlags::STORAGE),
    )
}

impl Compositor {
    pub fn new(gpu: &Arc<Gpu>, format: HeightFormat) -> Result<Self> {
        let kernel = |shader| ComputeKernel::new(gpu, shader, &FOLD_BINDINGS, &[]);
        let fold = [
            kernel(&shaders::LAYERS_LOAD_COMP)?,
            kernel(&shaders::LAYERS_STORE_COMP)?,
        ];
        let blend_kernel = |shader| ComputeKernel::new(gpu, shader, &BLEND_BINDINGS, &[]);
        let blend = [
            blend_kernel(&shaders::LAYERS_BLEND_COMP)?,
            blend_kernel(&shaders::LAYERS_BLEND_FROM_COMP)?,
            blend_kernel(&shaders::LAYERS_BLEND_TO_COMP)?,
            blend_kernel(&shaders::LAYERS_BLEND_THROUGH_COMP)?,
        ];
        let fold_r16 = match format {
            HeightFormat::R16 => Some([
                kernel(&shaders::LAYERS_LOAD_R16_COMP)?,
                kernel(&shaders::LAYERS_STORE_R16_COMP)?,
            ]),
            HeightFormat::R32f => None,
        };
        Ok(Self {
            gpu: gpu.clone(),
            fold,
            blend,
            fold_r16,
            dummy: storage_r32(gpu, "layers: no page", [1, 1])?,
            scratch: Vec::new(),
            seen: HashMap::new(),
            shown: None,
            timer: GpuTimer::new(gpu, 1)?,
            detached: false,
            totals: CompositeStats::default(),
        })
    }

    /// Recomposites everything at the next [`Self::update`] (after the stack changed in a way
    /// it cannot see, or a field was replaced).
    pub fn invalidate(&mut self) {
        self.shown = None;
    }

    /// Brings `height` (the composite) up to date with `base` and the layers of `stack`: every
    /// page whose inputs changed since the last call, or every page that is not flat in some
    /// input when the stack's folding settings changed.
    pub fn update(&mut self, store: &mut PageStore, stack: &Stack) -> Result<CompositeStats> {
        let _p = crate::profile::scope("layers: composite");
        let plan = Plan::of(stack);
        let mut stats = CompositeStats::default();
        if self.shown.as_ref() != Some(&plan) {
            stats.add(self.rebuild(store, &plan)?);
            self.shown = Some(plan);
            self.totals.add(stats);
            return Ok(stats);
        }
        let below: BTreeSet<PageId> = self.changed(store, &plan, true);
        let above: BTreeSet<PageId> = self.changed(store, &plan, false);
        if plan.split > 0 && !below.is_empty() {
            let ids: Vec<PageId> = below.iter().copied().collect();
            stats.add(self.fold_into(
                store,
                BELOW,
                BASE_FIELD,
                &plan.layers[..plan.split],
                &ids,
            )?);
            stats.cache_pages += ids.len();
        }
        let ids: Vec<PageId> = below.union(&above).copied().collect();
        if !ids.is_empty() {
            let source = if plan.split > 0 { BELOW } else { BASE_FIELD };
            stats.add(self.fold_into(store, HEIGHT, source, &plan.layers[plan.split..], &ids)?);
            stats.pages += ids.len();
        }
        self.totals.add(stats);
        Ok(stats)
    }

    /// Pages whose values changed (since the last call) in the base and the layers below the
    /// split (`below`), or in the layers from the split up; moves the seen epochs on.
    fn changed(&mut self, store: &PageStore, plan: &Plan, below: bool) -> BTreeSet<PageId> {
        let split = plan.split;
        let names: Vec<&str> = if below {
            std::iter::once(BASE_FIELD)
                .chain(plan.inputs(0..split))
                .collect()
        } else {
            plan.inputs(split..plan.layers.len()).collect()
        };
        let mut ids = BTreeSet::new();
        for name in names {
            let Some(f) = store.field(name) else { continue };
            let seen = self.seen.get(name).copied().unwrap_or(0);
            ids.extend(f.changes().values_changed_since(seen));
            self.seen.insert(name.to_string(), f.changes().epoch());
        }
        ids
    }

    /// Recomposites every page that is not flat in some input (and drops the composite's and
    /// cache's other pages), rebuilding the cache for the plan's split.
    fn rebuild(&mut self, store: &mut PageStore, plan: &Plan) -> Result<CompositeStats> {
        let desc = *store.height().desc();
        let mut stats = CompositeStats::default();
        // Everything seen now: later updates follow from here.
        let all: Vec<&str> = std::iter::once(BASE_FIELD)
            .chain(plan.inputs(0..plan.layers.len()))
            .collect();
        for name in &all {
            if let Some(f) = store.field(name) {
                self.seen.insert(name.to_string(), f.changes().epoch());
            }
        }
        let base_flat = flat_of(store, BASE_FIELD);
        let source = if plan.split > 0 {
            let names: Vec<&str> = std::iter::once(BASE_FIELD)
                .chain(plan.inputs(0..plan.split))
                .collect();
            let flat = fold_flats(store, &plan.layers[..plan.split], base_flat);
            let mut cache = self.derived_field(store, flat)?;
            if let Some(old) = store.field(BELOW) {
                cache.succeed(old);
            }
            store.insert_field(BELOW, cache)?;
            let ids = held_pages(store, names.iter().copied());
            stats.add(self.fold_into(
                store,
                BELOW,
                BASE_FIELD,
                &plan.layers[..plan.split],
                &ids,
            )?);
            stats.cache_pages += ids.len();
            BELOW
        } else {
            store.remove_field(BELOW);
            BASE_FIELD
        };
        let flat = desc.quantize(fold_flats(store, &plan.layers, base_flat));
        let names: Vec<&str> = all.clone();
        let ids = held_pages(store, names.iter().copied());
        let height = store.height();
        if height.flat() != flat {
            let mut fresh = Field::new(&self.gpu, desc, flat)?;
            fresh.set_frames_in_flight(height.places().detached);
            fresh.set_budgets(height.places().budgets().clone());
            fresh.succeed(height);
            store.insert_field(HEIGHT, fresh)?;
        } else {
            // Pages no input holds any more read as the (unchanged) flat value.
            let keep: BTreeSet<PageId> = ids.iter().copied().collect();
            let stale: Vec<PageId> = height
                .versions()
                .by_page()
                .map(|(id, _)| id)
                .filter(|id| !keep.contains(id))
                .collect();
            if !stale.is_empty() {
                store.height_mut().drop_pages(&stale);
            }
        }
        stats.add(self.fold_into(store, HEIGHT, source, &plan.layers[plan.split..], &ids)?);
        stats.pages += ids.len();
        Ok(stats)
    }

    /// Folds `layers` onto `source`'s pages `ids` and writes the results over `dest`'s pages
    /// (a derived field: no undo step).
    fn fold_into(
        &mut self,
        store: &mut PageStore,
        dest: &str,
        source: &str,
        layers: &[FoldLayer],
        ids: &[PageId],
    ) -> Result<CompositeStats> {
        let mut stats = CompositeStats::default();
        for chunk in ids.chunks(PAGES_PER_SUBMIT) {
            for name in std::iter::once(source).chain(
                layers
                    .iter()
                    .flat_map(|l| l.fields.iter().map(String::as_str)),
            ) {
                if let Some(f) = store.field_mut(name) {
                    f.ensure_visible(chunk)?;
                }
            }
            store
                .field_mut(dest)
                .ok_or_else(|| PageError::NoField(dest.to_string()))?
                .overwrite_pages(chunk)?;
            let images: Vec<&Image> = chunk
                .iter()
                .map(|&id| {
                    let f = &store.field(dest).expect("checked above");
                    let v = f.versions().page(id).expect("overwrite_pages made it");
                    f.places()
                        .gpu_page(v)
                        .map(|p| p.front())
                        .ok_or_else(|| field::budget_too_small(f))
                })
                .collect::<Result<_>>()?;
            stats.add(self.record(store, source, false, layers, chunk, &images)?);
            stats.blends += layers.len() * chunk.len();
            store
                .field_mut(dest)
                .expect("checked above")
                .mark_changed(chunk.iter().copied());
        }
        Ok(stats)
    }

    /// Records and runs the fold of `chunk`'s pages into `targets`.
    fn record(
        &mut self,
        store: &PageStore,
        source: &str,
        committed_source: bool,
        layers: &[FoldLayer],
        chunk: &[PageId],
        targets: &[&Image],
    ) -> Result<CompositeStats> {
        self.grow_scratch(chunk.len(), store.height().desc().page_size)?;
        let src = store
            .field(source)
            .ok_or_else(|| PageError::NoField(source.to_string()))?;
        let fold = ChunkFold {
            store,
            src,
            committed_source,
            layers,
        };
        let waves = self.plan_waves(&fold, chunk, targets);
        let sets = self.bind_sets(&waves)?;
        self.run_waves(&waves, &sets)
    }

    /// At least `n` scratch images of a page.
    fn grow_scratch(&mut self, n: usize, page_size: u32) -> Result<()> {
        while self.scratch.len() < n {
            let i = self.scratch.len();
            self.scratch.push(storage_r32(
                &self.gpu,
                &format!("layers: scratch {i}"),
                [page_size, page_size],
            )?);
        }
        Ok(())
    }

    /// The waves of `fold` over `chunk` (page j written to `targets[j]`): (r16 sources) the
    /// loads of every page, each blend pass of every page, (r16 destinations) the stores; a
    /// wave's dispatches touch disjoint images and run behind one barrier. r32f sources are read
    /// by the first blend pass, r32f destinations written by the last (every step keeps f32
    /// values: the same results as separate passes).
    fn plan_waves<'s>(
        &'s self,
        fold: &ChunkFold<'s>,
        chunk: &[PageId],
        targets: &[&'s Image],
    ) -> Vec<Vec<Step<'s>>> {
        let inputs: Vec<Inputs> = fold
            .layers
            .iter()
            .map(|l| [0, 1, 2].map(|i| fold.store.field(&l.fields[i])))
            .collect();
        let separate_load = fold.src.desc().format == HeightFormat::R16;
        let separate_store = targets
            .first()
            .is_some_and(|t| t.desc.format == vk::Format::R16_UNORM);
        let mut groups: Vec<(&[FoldLayer], &[Inputs])> = fold
            .layers
            .chunks(BLEND_LAYERS)
            .zip(inputs.chunks(BLEND_LAYERS))
            .collect();
        if groups.is_empty() && !(separate_load && separate_store) {
            // No layer: one pass copies the source to the destination.
            groups.push((&[], &[]));
        }
        let blend_waves = groups.len();
        let mut waves: Vec<Vec<Step>> =
            (0..blend_waves + usize::from(separate_load) + usize::from(separate_store))
                .map(|_| Vec::new())
                .collect();
        let first_blend = usize::from(separate_load);
        let desc = *fold.store.height().desc();
        for (j, &id) in chunk.iter().enumerate() {
            let r = desc.page_rect(id);
            let page = PageFold {
                id,
                size: [r.width(), r.height()],
                scratch: &self.scratch[j],
                source: fold.source_image(id),
                target: targets[j],
            };
            if separate_load {
                waves[0].push(self.load_step(fold, &page));
            }
            for (g, &(ls, fields)) in groups.iter().enumerate() {
                let from = g == 0 && !separate_load;
                let to = g + 1 == blend_waves && !separate_store;
                let step = self.blend_step(fold.src, &page, ls, fields, from, to);
                waves[first_blend + g].push(step);
            }
            if separate_store {
                let step = self.store_step(fold, &page);
                waves.last_mut().expect("a store wave").push(step);
            }
        }
        waves
    }

    /// The push constants every fold step of `fold` over `page` starts from.
    fn fold_push(fold: &ChunkFold, page: &PageFold) -> FoldPush {
        let desc = fold.store.height().desc();
        FoldPush {
            size: page.size,
            height_min: desc.height_min,
            height_range: desc.height_max - desc.height_min,
            ..Default::default()
        }
    }

    /// Loads `page` of an r16 source into its scratch image (a flat page: its flat height).
    fn load_step<'s>(&'s self, fold: &ChunkFold<'s>, page: &PageFold<'s>) -> Step<'s> {
        let kernel = match &self.fold_r16 {
            Some(r16) if page.source.is_some() => &r16[0],
            _ => &self.fold[0],
        };
        Step::Fold {
            kernel,
            push: FoldPush {
                flat_height: fold.src.flat(),
                present: u32::from(page.source.is_some()),
                ..Self::fold_push(fold, page)
            },
            images: [page.scratch, page.source.unwrap_or(&self.dummy)],
            store: false,
        }
    }

    /// Stores `page`'s scratch image into its r16 target.
    fn store_step<'s>(&'s self, fold: &ChunkFold<'s>, page: &PageFold<'s>) -> Step<'s> {
        let kernel = match &self.fold_r16 {
            Some(r16) => &r16[1],
            None => &self.fold[1],
        };
        Step::Fold {
            kernel,
            push: Self::fold_push(fold, page),
            images: [page.scratch, page.target],
            store: true,
        }
    }

    /// One blend pass of the layers `ls` (their fields `fields`) over `page`: reading the source
    /// page when `from`, writing the target when `to`, else through the scratch image.
    fn blend_step<'s>(
        &'s self,
        src: &Field,
        page: &PageFold<'s>,
        ls: &[FoldLayer],
        fields: &[Inputs<'s>],
        from: bool,
        to: bool,
    ) -> Step<'s> {
        let d = &self.dummy;
        let mut push = BlendPush {
            size: page.size,
            count: ls.len() as i32,
            flat_height: src.flat(),
            ..Default::default()
        };
        let mut images = vec![page.scratch];
        for (i, (l, f)) in ls.iter().zip(fields.iter()).enumerate() {
            push.modes |= (l.mode.index() as u32) << (2 * i);
            push.weights[i] = l.weight;
            let flats = [
                &mut push.flat_value[i],
                &mut push.flat_alpha[i],
                &mut push.flat_mask[i],
            ];
            for (part, flat) in flats.into_iter().enumerate() {
                *flat = f[part].map_or(0.0, Field::flat);
                let image = f[part].and_then(|f| f.visible_image(page.id));
                if image.is_some() {
                    push.present |= 1 << (3 * i + part);
                }
                images.push(image.unwrap_or(d));
            }
        }
        images.resize(1 + 3 * BLEND_LAYERS, d);
        if from && page.source.is_some() {
            push.present |= SOURCE_BIT;
        }
        images.push(if from { page.source.unwrap_or(d) } else { d });
        images.push(if to { page.target } else { d });
        Step::Blend {
            push,
            images,
            from,
            to,
        }
    }

    /// The blend kernel of a pass that reads the source (`from`) and writes the target (`to`).
    fn blend_kernel(&self, from: bool, to: bool) -> &ComputeKernel<BlendPush> {
        &self.blend[usize::from(from) | usize::from(to) << 1]
    }

    /// Every dispatch's set, made before recording (the recorder borrows them).
    fn bind_sets(&self, waves: &[Vec<Step>]) -> Result<Vec<Vec<DescriptorSet>>> {
        let mut sets = Vec::with_capacity(waves.len());
        for wave in waves {
            let mut made = Vec::with_capacity(wave.len());
            for step in wave {
                let set = match step {
                    Step::Fold { kernel, images, .. } => {
                        kernel.bind(&images.map(Resource::StorageImage))?
                    }
                    Step::Blend {
                        images, from, to, ..
                    } => {
                        let res: Vec<Resource> =
                            images.iter().map(|i| Resource::StorageImage(i)).collect();
                        self.blend_kernel(*from, *to).bind(&res)?
                    }
                };
                made.push(set);
            }
            sets.push(made);
        }
        Ok(sets)
    }

    /// Records `waves` (each behind one barrier) and submits them: waited for and timed, or
    /// detached.
    fn run_waves(
        &self,
        waves: &[Vec<Step>],
        sets: &[Vec<DescriptorSet>],
    ) -> Result<CompositeStats> {
        let mut rec = Recorder::new(&self.gpu)?;
        let mut query = None;
        let timer = if self.detached {
            None
        } else {
            self.timer.as_ref()
        };
        if let Some(t) = timer {
            rec.reset_timer(t);
            query = Some((t, rec.timer_begin(t, "layers: composite")?));
        }
        for (wave, sets) in waves.iter().zip(sets) {
            // Every access of the wave first, then one barrier, then the dispatches.
            for step in wave {
                wave_accesses(&mut rec, step);
            }
            rec.flush_barriers();
            for (step, set) in wave.iter().zip(sets) {
                match step {
                    Step::Fold { kernel, push, .. } => rec
                        .pass(kernel, set)
                        .push(push)
                        .dispatch(page_groups(push.size))?,
                    Step::Blend { push, from, to, .. } => rec
                        .pass(self.blend_kernel(*from, *to), set)
                        .push(push)
                        .dispatch(page_groups(push.size))?,
                }
            }
        }
        if let Some((t, q)) = query {
            rec.timer_end(t, q);
        }
        if self.detached {
            // SAFETY: the sets made above are never rewritten (dropped, they are released after
            // the submission); no mapped memory is used.
            let _ticket = unsafe { rec.submit_detached(None, None)? };
            return Ok(CompositeStats::default());
        }
        rec.submit_and_wait()?;
        let gpu_ns = match timer {
            Some(t) => t.results()?.iter().map(|p| p.gpu_ns).sum(),
            None => 0.0,
        };
        Ok(CompositeStats {
            gpu_ns,
            ..Default::default()
        })
    }
}

/// What every page of one fold chunk shares: the store, the source field (its committed
/// versions, or what is visible), the layers folded onto it.
struct ChunkFold<'s> {
    store: &'s PageStore,
    src: &'s Field,
    committed_source: bool,
    layers: &'s [FoldLayer],
}

impl<'s> ChunkFold<'s> {
    /// The source's image of page `id`, None where the page is flat.
    fn source_image(&self, id: PageId) -> Option<&'s Image> {
        if self.committed_source {
            self.src
                .versions()
                .page(id)
                .and_then(|v| self.src.places().gpu_page(v))
                .map(|p| p.front())
        } else {
            self.src.visible_image(id)
        }
    }
}

/// One page of a fold chunk: its id and size, its scratch image, the source's image (None:
/// flat) and the target.
struct PageFold<'s> {
    id: PageId,
    size: [i32; 2],
    scratch: &'s Image,
    source: Option<&'s Image>,
    target: &'s Image,
}

/// The workgroups of a dispatch over a page of `size`.
fn page_groups(size: [i32; 2]) -> [u32; 3] {
    [
        (size[0] as u32).div_ceil(k::BRUSH_GROUP_X),
        (size[1] as u32).div_ceil(k::BRUSH_GROUP_Y),
        1,
    ]
}

/// The image accesses of one step, recorded before its wave's barrier.
fn wave_accesses<'a>(rec: &mut Recorder<'a>, step: &Step<'a>) {
    match step {
        Step::Fold { images, store, .. } => {
            let (scratch, other) = if *store {
                (Access::ComputeStorageRead, Access::ComputeStorageWrite)
            } else {
                (Access::ComputeStorageWrite, Access::ComputeStorageRead)
            };
            rec.image(images[0], scratch);
            rec.image(images[1], other);
        }
        Step::Blend {
            images, from, to, ..
        } => {
            let scratch = match (from, to) {
                (false, false) => Access::ComputeStorageReadWrite,
                (true, false) => Access::ComputeStorageWrite,
                _ => Access::ComputeStorageRead,
            };
            rec.image(images[0], scratch);
            // The placeholder is only ever read (its layout set on first use).
            let last = images.len() - 1;
            for image in &images[1..last] {
                rec.image(image, Access::ComputeStorageRead);
            }
            let out = if *to {
                Access::ComputeStorageWrite
            } else {
                Access::ComputeStorageRead
            };
            rec.image(images[last], out);
        }
    }
}

impl Compositor {
    /// Folds `layer` into field `target` (the base, or the value of the layer below it) as one
    /// undo step of `target`: `target ← blend(layer, target)` at every texel, on the pages where
    /// the layer or the target is not flat (every page if the fold changes the flat value).
    pub fn merge(&mut self, store: &mut PageStore, target: &str, layer: &Layer) -> Result<()> {
        let fl = FoldLayer::of(layer);
        let t = store
            .field(target)
            .ok_or_else(|| PageError::NoField(target.to_string()))?;
        let desc = *t.desc();
        let folded = desc.quantize(fold_flats(store, std::slice::from_ref(&fl), t.flat()));
        let ids: Vec<PageId> = if folded != t.flat() {
            desc.page_ids().collect()
        } else {
            held_pages(
                store,
                std::iter::once(target).chain(fl.fields.iter().map(String::as_str)),
            )
        };
        let field = store.field_mut(target).expect("checked above");
        field.begin_versions(ids.clone(), false);
        let layers = [fl];
        for (c, chunk) in ids.chunks(PAGES_PER_SUBMIT).enumerate() {
            for name in layers[0].fields.iter() {
                if let Some(f) = store.field_mut(name) {
                    f.ensure_visible(chunk)?;
                }
            }
            let field = store.field_mut(target).expect("checked above");
            field.ensure_committed(chunk)?;
            let first = c * PAGES_PER_SUBMIT;
            let indices: Vec<usize> = (first..first + chunk.len()).collect();
            field.ensure_working(&indices, &[], None)?;
            let field = store.field(target).expect("checked above");
            let images: Vec<&Image> = indices
                .iter()
                .map(|&i| {
                    field
                        .working_page(i)
                        .map(|p| p.front())
                        .ok_or_else(|| field::budget_too_small(field))
                })
                .collect::<Result<_>>()?;
            self.record(store, target, true, &layers, chunk, &images)?;
            store
                .field_mut(target)
                .expect("checked above")
                .wrote_working(&indices, chunk);
        }
        store
            .field_mut(target)
            .expect("checked above")
            .commit_versions(false);
        Ok(())
    }
}

const RULES_BINDINGS: [BindingKind; 10] = [BindingKind::StorageImage; 10];

/// The derived field holding the height below a layer while its procedural mask is made.
const RULES_SOURCE: &str = "layers.rules_source";
/// The weight a procedural mask brush's stroke reads ([`Compositor::rules_weight`]).
pub const RULES_WEIGHT: &str = "layers.rules_weight";

impl Compositor {
    /// Fills the mask of layer `index` of `stack` from the height below it (the base and the
    /// visible layers under it, folded) by `rules`, as one undo step of the mask field; the
    /// mask's every page that can differ from its flat value is written.
    pub fn fill_mask(
        &mut self,
        store: &mut PageStore,
        stack: &Stack,
        index: usize,
        rules: &super::rules::MaskRules,
    ) -> Result<()> {
        let (below, flat) = Self::folded_below(store, stack, index);
        let mask = stack.layers[index].field(super::Part::Mask);
        self.fill_rules(store, &below, flat, rules, mask)
    }

    /// A derived r32f field of the document's grid at `flat`, with the compositor's frames in
    /// flight and the height's budgets (the cache below the selection, the rules' fields).
    fn derived_field(&self, store: &PageStore, flat: f32) -> Result<Field> {
        let height = store.height();
        let mut f = Field::new(&self.gpu, f32_desc(height.desc()), flat)?;
        f.set_frames_in_flight(self.detached);
        f.set_budgets(height.places().budgets().clone());
        Ok(f)
    }

    /// Makes the derived field [`RULES_WEIGHT`] (r32f, no undo) hold the mask `rules` give from
    /// the height below layer `index` of `stack`: the weight of a procedural mask brush's
    /// stroke on that layer. Replaces the field left by an earlier call.
    pub fn rules_weight(
        &mut self,
        store: &mut PageStore,
        stack: &Stack,
        index: usize,
        rules: &super::rules::MaskRules,
    ) -> Result<()> {
        let (below, flat) = Self::folded_below(store, stack, index);
        let vs = store.height().desc().vertical_scale();
        let flat_weight = super::rules::mask_at(rules, vs, [1, 1], |_, _| flat, 0, 0);
        let mut weight = self.derived_field(store, flat_weight)?;
        weight.set_undo_budget(0);
        store.insert_field(RULES_WEIGHT, weight)?;
        self.fill_rules(store, &below, flat, rules, RULES_WEIGHT.to_string())
    }

    /// The layers below `index` that change the fold, and the height they fold flat pages to.
    fn folded_below(store: &PageStore, stack: &Stack, index: usize) -> (Vec<FoldLayer>, f32) {
        let below: Vec<FoldLayer> = stack.layers[..index]
            .iter()
            .filter(|l| l.weight() > 0.0)
            .map(FoldLayer::of)
            .collect();
        let flat = fold_flats(store, &below, flat_of(store, BASE_FIELD));
        (below, flat)
    }

    /// Fills field `target` with the mask `rules` give from the height below a layer: the
    /// layers `below` it folded onto the base, flat pages at `flat`.
    fn fill_rules(
        &mut self,
        store: &mut PageStore,
        below: &[FoldLayer],
        flat: f32,
        rules: &super::rules::MaskRules,
        target: String,
    ) -> Result<()> {
        // The height below the layer, in a derived r32f field.
        let inputs = held_pages(
            store,
            std::iter::once(BASE_FIELD).chain(
                below
                    .iter()
                    .flat_map(|l| l.fields.iter().map(String::as_str)),
            ),
        );
        let source = self.derived_field(store, flat)?;
        store.insert_field(RULES_SOURCE, source)?;
        let r = self.fill_from(store, below, &inputs, target, rules);
        store.remove_field(RULES_SOURCE);
        r
    }

    /// Fills the mask field `mask` by `rules` from the folded height in [`RULES_SOURCE`]
    /// (`inputs`: the pages that hold memory there).
    fn fill_from(
        &mut self,
        store: &mut PageStore,
        below: &[FoldLayer],
        inputs: &[PageId],
        mask: String,
        rules: &super::rules::MaskRules,
    ) -> Result<()> {
        self.fold_into(store, RULES_SOURCE, BASE_FIELD, below, inputs)?;
        let flat_height = store.field(RULES_SOURCE).expect("made above").flat();
        let ids = mask_pages(store, &mask, rules, inputs, flat_height)?;
        let kernel = ComputeKernel::<RulesPush>::new(
            &self.gpu,
            &shaders::LAYERS_MASK_RULES_COMP,
            &RULES_BINDINGS,
            &[],
        )?;
        let desc = *store.height().desc();
        let [height, slope, curvature] = rules.edges(desc.vertical_scale());
        let base_push = RulesPush {
            doc: [desc.width as i32, desc.height as i32],
            side: desc.page_size as i32,
            flat_height,
            rules: u32::from(height.is_some())
                | u32::from(slope.is_some()) << 1
                | u32::from(curvature.is_some()) << 2,
            height_band: height.unwrap_or_default(),
            slope_band: slope.unwrap_or_default(),
            curvature_band: curvature.unwrap_or_default(),
            ..Default::default()
        };
        store
            .field_mut(&mask)
            .expect("checked by mask_pages")
            .begin_versions(ids.clone(), false);
        for (c, chunk) in ids.chunks(PAGES_PER_SUBMIT).enumerate() {
            let first = c * PAGES_PER_SUBMIT;
            let indices: Vec<usize> = (first..first + chunk.len()).collect();
            self.fill_rules_chunk(store, &kernel, &base_push, &mask, &indices, chunk)?;
        }
        store
            .field_mut(&mask)
            .expect("checked by mask_pages")
            .commit_versions(false);
        Ok(())
    }

    /// Fills pages `chunk` (working versions `indices`) of the mask field `mask` with `kernel`.
    fn fill_rules_chunk(
        &self,
        store: &mut PageStore,
        kernel: &ComputeKernel<RulesPush>,
        base_push: &RulesPush,
        mask: &str,
        indices: &[usize],
        chunk: &[PageId],
    ) -> Result<()> {
        let desc = *store.height().desc();
        let mut around: BTreeSet<PageId> = BTreeSet::new();
        for id in chunk {
            for (dx, dy) in NEIGHBOURHOOD {
                if let Some(n) = desc.neighbour(*id, dx, dy) {
                    around.insert(n);
                }
            }
        }
        let around: Vec<PageId> = around.into_iter().collect();
        store
            .field_mut(RULES_SOURCE)
            .expect("made by fill_rules")
            .ensure_visible(&around)?;
        let m = store.field_mut(mask).expect("checked by mask_pages");
        m.ensure_working(indices, &[], None)?;
        let (src, m) = (
            store.field(RULES_SOURCE).expect("made by fill_rules"),
            store.field(mask).expect("checked by mask_pages"),
        );
        let mut sets = Vec::with_capacity(chunk.len());
        let mut work = Vec::with_capacity(chunk.len());
        for (&i, &id) in indices.iter().zip(chunk) {
            let target = m
                .working_page(i)
                .map(|p| p.front())
                .ok_or_else(|| field::budget_too_small(m))?;
            let r = desc.page_rect(id);
            let mut push = RulesPush {
                origin: [r.x0, r.y0],
                size: [r.width(), r.height()],
                ..*base_push
            };
            let (mut images, present) = field::neighbourhood(src, id, &self.dummy);
            push.present |= present;
            images.push(target);
            let res: Vec<Resource> = images.iter().map(|i| Resource::StorageImage(i)).collect();
            sets.push(kernel.bind(&res)?);
            work.push((push, images));
        }
        let mut rec = Recorder::new(&self.gpu)?;
        for (_, images) in &work {
            for image in &images[..9] {
                rec.image(image, Access::ComputeStorageRead);
            }
            rec.image(images[9], Access::ComputeStorageWrite);
        }
        rec.flush_barriers();
        for ((push, _), set) in work.iter().zip(&sets) {
            rec.pass(kernel, set)
                .push(push)
                .dispatch(page_groups(push.size))?;
        }
        rec.submit_and_wait()?;
        store
            .field_mut(mask)
            .expect("checked by mask_pages")
            .wrote_working(indices, chunk);
        Ok(())
    }
}

/// The pages of mask field `mask` whose rules' mask can differ from the flat one (the source
/// flat at `flat_height`): those within a page of the source's pages `inputs` (slope and
/// curvature reach one texel across), those the mask holds now, or all when the flat source
/// gives another mask than the field's flat value.
fn mask_pages(
    store: &PageStore,
    mask: &str,
    rules: &super::rules::MaskRules,
    inputs: &[PageId],
    flat_height: f32,
) -> Result<Vec<PageId>> {
    let desc = *store.height().desc();
    let vs = desc.vertical_scale();
    let flat_mask = super::rules::mask_at(rules, vs, [1, 1], |_, _| flat_height, 0, 0);
    let m = store
        .field(mask)
        .ok_or_else(|| PageError::NoField(mask.to_string()))?;
    if flat_mask != m.flat() {
        return Ok(desc.page_ids().collect());
    }
    let mut ids: BTreeSet<PageId> = m.versions().by_page().map(|(id, _)| id).collect();
    for id in inputs {
        ids.extend(
            NEIGHBOURHOOD
                .into_iter()
                .filter_map(|(dx, dy)| desc.neighbour(*id, dx, dy)),
        );
    }
    Ok(ids.into_iter().collect())
}

/// The document's grid in r32f (layers and the cache hold f32 whatever the document's format).
pub fn f32_desc(desc: &DocumentDesc) -> DocumentDesc {
    DocumentDesc {
        format: HeightFormat::R32f,
        ..*desc
    }
}

//! Same-run ceilings: a copy kernel over large R32F storage images (and, for comparison, over
//! storage buffers) and an FMA-chain kernel.

use super::{median, BenchOptions, Ceilings, CopyCeiling, FmaCeiling};
use crate::gpu::{
    shaders, vk, Access, BindingKind, Buffer, BufferDesc, ComputeKernel, DescriptorSet, Gpu,
    GpuError, GpuTimer, Image, ImageDesc, Recorder, Resource, Result,
};
use bytemuck::{Pod, Zeroable};
use std::sync::Arc;

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct CopyImagePush {
    mode: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct CountPush {
    count: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct FmaPush {
    mul: f32,
    add: f32,
    iterations: u32,
    count: u32,
}

/// Workgroups for `count` invocations of 256 as a 2D grid (x at most 65,535).
fn groups_for(count: u64) -> [u32; 3] {
    let groups = count.div_ceil(256);
    let x = groups.min(65_535);
    [x as u32, groups.div_ceil(x) as u32, 1]
}

pub(super) fn timer(gpu: &Arc<Gpu>, passes: usize) -> Result<GpuTimer> {
    GpuTimer::new(gpu, passes as u32)?
        .ok_or_else(|| GpuError::Unsupported("timestamps are needed for the ceilings".into()))
}

/// Median pass time in ms, warm-up passes dropped.
pub(super) fn timed_median(timer: &GpuTimer, warmup: usize) -> Result<f64> {
    let times: Vec<f64> = timer
        .results()?
        .iter()
        .skip(warmup)
        .map(|p| p.gpu_ns * 1e-6)
        .collect();
    Ok(median(&times))
}

/// FMA chains: `invocations` x 8 independent chains of `iterations` dependent FMAs.
struct FmaChains {
    kernel: ComputeKernel<FmaPush>,
    set: crate::gpu::DescriptorSet,
    sums: Buffer,
    invocations: u64,
    iterations: u32,
}

impl FmaChains {
    fn new(gpu: &Arc<Gpu>, invocations: u64, iterations: u32) -> Result<Self> {
        let sums = Buffer::new(
            gpu,
            "fma sums",
            BufferDesc::new(invocations * 4).usage(vk::BufferUsageFlags::STORAGE_BUFFER),
        )?;
        let kernel = ComputeKernel::<FmaPush>::new(
            gpu,
            &shaders::BENCH_FMA_COMP,
            &[BindingKind::StorageBuffer],
            &[],
        )?;
        let set = kernel.bind(&[Resource::StorageBuffer(&sums)])?;
        Ok(Self {
            kernel,
            set,
            sums,
            invocations,
            iterations,
        })
    }

    fn flops(&self) -> u64 {
        self.invocations * u64::from(self.iterations) * 8 * 2
    }

    /// Records one pass (timed when `timer` is given).
    fn record<'a>(&'a self, rec: &mut Recorder<'a>, timer: Option<&'a GpuTimer>) -> Result<()> {
        rec.pass(&self.kernel, &self.set)
            .write_buffer(&self.sums)
            .push(&FmaPush {
                mul: 0.999_9,
                add: 1e-4,
                iterations: self.iterations,
                count: self.invocations as u32,
            })
            .timed(timer, "fma")
            .dispatch(groups_for(self.invocations))
    }
}

/// Runs `passes` passes recorded by `record(rec, i)` (each timed with `timer`) in one
/// submission; the median pass time in ms after the first `warmup`.
fn time_passes<'a>(
    gpu: &'a Arc<Gpu>,
    timer: &'a GpuTimer,
    passes: usize,
    warmup: usize,
    mut record: impl FnMut(&mut Recorder<'a>, usize) -> Result<()>,
) -> Result<f64> {
    let mut rec = Recorder::new(gpu)?;
    rec.reset_timer(timer);
    for i in 0..passes {
        record(&mut rec, i)?;
    }
    rec.submit_and_wait()?;
    timed_median(timer, warmup)
}

/// Keeps a GPU's clocks up between measurements. NVIDIA's governor drops the SM clock within
/// half a second of light load (1980 → 345 MHz on the H200) and needs over a second of
/// sustained load to raise it again, so a stroke measured after CPU work would run at a fraction
/// of the clock. The heater runs FMA chains for a while before each timed run. No-op on CPU
/// devices (lavapipe), where it would only burn the cores the measurement needs.
pub(super) struct Heater {
    gpu: Arc<Gpu>,
    chains: FmaChains,
    pass_ms: f64,
    enabled: bool,
}

impl Heater {
    pub(super) fn new(gpu: &Arc<Gpu>) -> Result<Self> {
        // About 2.5 ms per pass on an H200.
        let mut h = Self {
            gpu: gpu.clone(),
            chains: FmaChains::new(gpu, 1 << 21, 4096)?,
            pass_ms: 1.0,
            enabled: gpu.info().device_type != vk::PhysicalDeviceType::CPU,
        };
        if h.enabled {
            // Time one pass (after one to build caches) to size later heats.
            let t = timer(gpu, 2)?;
            h.pass_ms =
                time_passes(gpu, &t, 2, 1, |rec, _| h.chains.record(rec, Some(&t)))?.max(0.01);
        }
        Ok(h)
    }

    pub(super) fn enabled(&self) -> bool {
        self.enabled
    }

    /// Keeps the GPU busy for about `ms` (in submissions of at most ~50 ms).
    pub(super) fn heat(&self, ms: f64) -> Result<()> {
        if !self.enabled {
            return Ok(());
        }
        let mut left = (ms / self.pass_ms).ceil().max(1.0) as usize;
        let per_submit = ((50.0 / self.pass_ms).floor() as usize).max(1);
        while left > 0 {
            let n = left.min(per_submit);
            let mut rec = Recorder::new(&self.gpu)?;
            for _ in 0..n {
                self.chains.record(&mut rec, None)?;
            }
            rec.submit_and_wait()?;
            left -= n;
        }
        Ok(())
    }
}

/// Heat before a section that follows CPU work: long enough to raise idle clocks to the top.
pub(super) const HEAT_LONG_MS: f64 = 1500.0;
/// Heat before each timed run: keeps the clocks where the long heat put them.
pub(super) const HEAT_SHORT_MS: f64 = 30.0;

pub(super) fn measure(gpu: &Arc<Gpu>, o: &BenchOptions, heater: &Heater) -> Result<Ceilings> {
    heater.heat(HEAT_LONG_MS)?;
    // Large enough to dwarf every cache (256 MiB per image on the full run).
    let side: u32 = if o.quick { 2048 } else { 8192 };
    // Ceilings take more repeats than the rest: they anchor every fraction.
    let warmup = o.warmup.max(3);
    let repeats = (o.repeats * 2).max(9);
    let passes = warmup + repeats;

    let copies = Copies::new(gpu, side)?;
    let image_ms = copies.time_images(gpu, passes, warmup)?;
    let buffer_ms = copies.time_buffers(gpu, passes, warmup)?;
    let image_texels = copies.texels();
    let buffer_elements = copies.buffer_bytes / 4;
    drop(copies);
    // One radius-1024 wave's square (2048², 512² quick), each pass waiting on the one before.
    let (wave_side, wave_page) = if o.quick { (512, 128) } else { (2048, 512) };
    let wave = Copies::new(gpu, wave_side)?;
    let wave_ms = wave.time_images(gpu, passes, warmup)?;
    let wave_texels = wave.texels();
    drop(wave);
    // The same square in pages, a dispatch a page as a brush's wave runs: what the pass
    // structure alone allows.
    let paged = PagedCopies::new(gpu, wave_side, wave_page)?;
    let paged_ms = paged.time(gpu, passes, warmup)?;
    let paged_texels = paged.texels();
    drop(paged);
    let fma = measure_fma(gpu, o, passes, warmup)?;

    let copy = |elements: u64, ms: f64| CopyCeiling {
        elements,
        bytes: elements * 8,
        median_ms: ms,
        gb_s: super::ratio(elements as f64 * 8.0, ms * 1e6),
    };
    Ok(Ceilings {
        copy_image: copy(image_texels, image_ms),
        copy_buffer: copy(buffer_elements, buffer_ms),
        copy_image_wave: Some(copy(wave_texels, wave_ms)),
        copy_image_wave_pages: Some(copy(paged_texels, paged_ms)),
        fma,
    })
}

/// The image copy kernel (bench/copy_image.comp): set 0 reads image 0, writes image 1.
fn copy_image_kernel(gpu: &Arc<Gpu>) -> Result<ComputeKernel<CopyImagePush>> {
    ComputeKernel::new(
        gpu,
        &shaders::BENCH_COPY_IMAGE_COMP,
        &[BindingKind::StorageImage, BindingKind::StorageImage],
        &[],
    )
}

/// What the copy ceilings copy: two R32F storage images of `side`² texels and two storage
/// buffers of the same bytes (as far as one binding holds), each pair with the copy kernel's
/// sets reading one and writing the other. (Fields drop in this order: sets before kernels,
/// kernels before what they bind.)
struct Copies {
    side: u32,
    buffer_bytes: u64,
    buffer_sets: [DescriptorSet; 2],
    buffer_kernel: ComputeKernel<CountPush>,
    buffers: [Buffer; 2],
    sets: [DescriptorSet; 2],
    kernel: ComputeKernel<CopyImagePush>,
    images: [Image; 2],
}

impl Copies {
    /// The images, buffers, kernels and sets, image a filled with a hash pattern and buffer a
    /// with its first bytes.
    fn new(gpu: &Arc<Gpu>, side: u32) -> Result<Self> {
        let desc = ImageDesc::new_2d(vk::Format::R32_SFLOAT, [side, side])
            .usage(vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::TRANSFER_SRC);
        let images = [
            Image::new(gpu, "copy ceiling a", desc)?,
            Image::new(gpu, "copy ceiling b", desc)?,
        ];
        let kernel = copy_image_kernel(gpu)?;
        let sets = [
            kernel.bind(&[
                Resource::StorageImage(&images[0]),
                Resource::StorageImage(&images[1]),
            ])?,
            kernel.bind(&[
                Resource::StorageImage(&images[1]),
                Resource::StorageImage(&images[0]),
            ])?,
        ];
        let texels = u64::from(side) * u64::from(side);

        // Buffers: the same bytes, if one binding can hold them.
        let max_range = u64::from(gpu.info().max_storage_buffer_range) & !15;
        let buffer_bytes = (texels * 4).min(max_range);
        let buffer_desc = BufferDesc::new(buffer_bytes).usage(
            vk::BufferUsageFlags::STORAGE_BUFFER
                | vk::BufferUsageFlags::TRANSFER_DST
                | vk::BufferUsageFlags::TRANSFER_SRC,
        );
        let buffers = [
            Buffer::new(gpu, "copy ceiling a", buffer_desc)?,
            Buffer::new(gpu, "copy ceiling b", buffer_desc)?,
        ];
        let buffer_kernel = ComputeKernel::<CountPush>::new(
            gpu,
            &shaders::BENCH_COPY_BUFFER_COMP,
            &[BindingKind::StorageBuffer, BindingKind::StorageBuffer],
            &[],
        )?;
        let buffer_sets = [
            buffer_kernel.bind(&[
                Resource::StorageBuffer(&buffers[0]),
                Resource::StorageBuffer(&buffers[1]),
            ])?,
            buffer_kernel.bind(&[
                Resource::StorageBuffer(&buffers[1]),
                Resource::StorageBuffer(&buffers[0]),
            ])?,
        ];
        let copies = Self {
            side,
            buffer_bytes,
            buffer_sets,
            buffer_kernel,
            buffers,
            sets,
            kernel,
            images,
        };
        copies.fill(gpu)?;
        Ok(copies)
    }

    /// Texels per image.
    fn texels(&self) -> u64 {
        u64::from(self.side) * u64::from(self.side)
    }

    /// Workgroups of the image copy kernel.
    fn image_groups(&self) -> [u32; 3] {
        [self.side.div_ceil(16), self.side.div_ceil(16), 1]
    }

    /// Fills image a with a hash pattern, and buffer a with its first bytes.
    fn fill(&self, gpu: &Arc<Gpu>) -> Result<()> {
        let (images, side) = (&self.images, self.side);
        let mut rec = Recorder::new(gpu)?;
        // Mode 0 only writes `dst`, but `src` is bound (and declared read) too.
        rec.pass(&self.kernel, &self.sets[1])
            .read_storage_image(&images[1])
            .write_image(&images[0])
            .push(&CopyImagePush { mode: 0 })
            .dispatch(self.image_groups())?;
        rec.copy_image_region_to_buffer(
            &images[0],
            [0, 0],
            [side, (self.buffer_bytes / (u64::from(side) * 4)) as u32],
            &self.buffers[0],
            0,
        );
        rec.submit_and_wait()
    }

    /// Median GPU time (ms) of copying image to image, `passes` times (the first `warmup` not
    /// counted).
    fn time_images(&self, gpu: &Arc<Gpu>, passes: usize, warmup: usize) -> Result<f64> {
        let images = &self.images;
        let image_groups = self.image_groups();
        let image_timer = timer(gpu, passes)?;
        time_passes(gpu, &image_timer, passes, warmup, |rec, i| {
            rec.pass(&self.kernel, &self.sets[i % 2])
                .read_storage_image(&images[i % 2])
                .write_image(&images[1 - i % 2])
                .push(&CopyImagePush { mode: 1 })
                .timed(Some(&image_timer), "copy image")
                .dispatch(image_groups)
        })
    }

    /// Median GPU time (ms) of copying buffer to buffer, `passes` times (the first `warmup` not
    /// counted).
    fn time_buffers(&self, gpu: &Arc<Gpu>, passes: usize, warmup: usize) -> Result<f64> {
        let buffers = &self.buffers;
        let vec4s = self.buffer_bytes / 16;
        let buffer_timer = timer(gpu, passes)?;
        time_passes(gpu, &buffer_timer, passes, warmup, |rec, i| {
            rec.pass(&self.buffer_kernel, &self.buffer_sets[i % 2])
                .read_buffer(&buffers[i % 2])
                .write_buffer(&buffers[1 - i % 2])
                .push(&CountPush {
                    count: vec4s as u32,
                })
                .timed(Some(&buffer_timer), "copy buffer")
                .dispatch(groups_for(vec4s))
        })
    }
}

/// The wave-size copy split into pages: `(side / page)²` pairs (a, b) of R32F storage images of
/// `page`² texels, the copy kernel's sets over each pair both ways, image a of every pair filled
/// with a hash pattern. (Fields drop in this order: sets before the kernel, the kernel before
/// the images.)
struct PagedCopies {
    page: u32,
    sets: Vec<[DescriptorSet; 2]>,
    kernel: ComputeKernel<CopyImagePush>,
    images: Vec<[Image; 2]>,
}

impl PagedCopies {
    /// `side` a multiple of `page`.
    fn new(gpu: &Arc<Gpu>, side: u32, page: u32) -> Result<Self> {
        debug_assert_eq!(side % page, 0, "whole pages");
        let desc = ImageDesc::new_2d(vk::Format::R32_SFLOAT, [page, page])
            .usage(vk::ImageUsageFlags::STORAGE);
        let pages = (side / page).pow(2);
        let images = (0..pages)
            .map(|_| {
                Ok([
                    Image::new(gpu, "paged copy ceiling a", desc)?,
                    Image::new(gpu, "paged copy ceiling b", desc)?,
                ])
            })
            .collect::<Result<Vec<_>>>()?;
        let kernel = copy_image_kernel(gpu)?;
        let sets = images
            .iter()
            .map(|[a, b]| {
                Ok([
                    kernel.bind(&[Resource::StorageImage(a), Resource::StorageImage(b)])?,
                    kernel.bind(&[Resource::StorageImage(b), Resource::StorageImage(a)])?,
                ])
            })
            .collect::<Result<Vec<_>>>()?;
        let paged = Self {
            page,
            sets,
            kernel,
            images,
        };
        let mut rec = Recorder::new(gpu)?;
        for ([a, b], [_, b_to_a]) in paged.images.iter().zip(&paged.sets) {
            // Mode 0 only writes `dst`, but `src` is bound (and declared read) too.
            rec.pass(&paged.kernel, b_to_a)
                .read_storage_image(b)
                .write_image(a)
                .push(&CopyImagePush { mode: 0 })
                .dispatch(paged.groups())?;
        }
        rec.submit_and_wait()?;
        Ok(paged)
    }

    fn groups(&self) -> [u32; 3] {
        [self.page.div_ceil(16), self.page.div_ceil(16), 1]
    }

    /// Texels copied a pass, over all pages.
    fn texels(&self) -> u64 {
        self.images.len() as u64 * u64::from(self.page).pow(2)
    }

    /// Median GPU time (ms) of a pass copying every page one way, `passes` times alternating
    /// (the first `warmup` not counted): one barrier before a pass, then a dispatch a page.
    fn time(&self, gpu: &Arc<Gpu>, passes: usize, warmup: usize) -> Result<f64> {
        let timer = timer(gpu, passes)?;
        time_passes(gpu, &timer, passes, warmup, |rec, i| {
            let (from, to) = (i % 2, 1 - i % 2);
            for pair in &self.images {
                rec.image(&pair[from], Access::ComputeStorageRead);
                rec.image(&pair[to], Access::ComputeStorageWrite);
            }
            rec.flush_barriers();
            let q = rec.timer_begin(&timer, "copy image pages")?;
            for sets in &self.sets {
                rec.pass(&self.kernel, &sets[from])
                    .push(&CopyImagePush { mode: 1 })
                    .dispatch(self.groups())?;
            }
            rec.timer_end(&timer, q);
            Ok(())
        })
    }
}

/// The FMA ceiling: chains with enough invocations to fill any GPU and enough iterations to
/// hide the launch, timed `passes` times (the first `warmup` not counted).
fn measure_fma(
    gpu: &Arc<Gpu>,
    o: &BenchOptions,
    passes: usize,
    warmup: usize,
) -> Result<FmaCeiling> {
    let fma = if o.quick {
        FmaChains::new(gpu, 1 << 16, 512)?
    } else {
        FmaChains::new(gpu, 1 << 21, 4096)?
    };
    let fma_timer = timer(gpu, passes)?;
    let fma_ms = time_passes(gpu, &fma_timer, passes, warmup, |rec, _| {
        fma.record(rec, Some(&fma_timer))
    })?;
    let flops = fma.flops();
    Ok(FmaCeiling {
        invocations: fma.invocations,
        iterations: fma.iterations,
        flops,
        median_ms: fma_ms,
        gflop_s: super::ratio(flops as f64, fma_ms * 1e6),
    })
}

//! Noise generation on the GPU: uploads the tables once, builds one pipeline per noise kind
//! (the kind is a specialization constant, so its switch folds away) and fills W x H grids in row
//! chunks, timing each dispatch with timestamps.

use super::tables::{NoiseTables, TABLE_SIZE};
use super::{NoiseKind, NoiseSettings};
use crate::gpu::{
    shaders, vk, Access, BindingKind, Buffer, BufferDesc, ComputeKernel, Gpu, GpuError, GpuTimer,
    Image, ImageDesc, Recorder, Resource, Result,
};
use crate::noise::shared::{NoiseGenPush, NoiseGrid};
use std::sync::Arc;

/// Why noise could not be generated.
#[derive(Debug, thiserror::Error)]
pub enum NoiseError {
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// A parameter out of range (named by its CLI flag).
    #[error("{0}")]
    Settings(String),
    #[error("noise grid must not be empty")]
    EmptyGrid,
}

/// Workgroup size of `noise/generate.comp`.
const GROUP: [u32; 2] = [
    crate::shared_constants::NOISE_GROUP_X,
    crate::shared_constants::NOISE_GROUP_Y,
];
/// Samples per dispatch chunk (64 MiB of f32): bounds buffer sizes on any device.
const CHUNK_SAMPLES: u64 = 1 << 24;

/// One generated grid.
pub struct GpuNoiseRun {
    pub heights: Vec<f32>,
    /// Sum of the dispatches' GPU times (timestamps), in nanoseconds; `None` without timestamps.
    pub gpu_ns: Option<f64>,
}

/// GPU noise generator.
pub struct GpuNoise {
    gpu: Arc<Gpu>,
    perm: Image,
    grad: Image,
    /// Per kind: the kernel reading gradients from shared memory, and the one reading the table.
    kernels: Vec<[Option<ComputeKernel<NoiseGenPush>>; 2]>,
    /// Stage the gradient table in shared memory instead of fetching it per octave (off: on the
    /// H200 it measured 3-25x slower, docs/PERF.md).
    shared_gradients: bool,
    timer: Option<GpuTimer>,
    chunk_samples: u64,
}

impl GpuNoise {
    pub fn new(gpu: &Arc<Gpu>, tables: &NoiseTables) -> Result<Self> {
        let desc = ImageDesc::new_2d(vk::Format::R8G8B8A8_UINT, [TABLE_SIZE as u32; 2]).usage(
            vk::ImageUsageFlags::SAMPLED
                | vk::ImageUsageFlags::TRANSFER_DST
                | vk::ImageUsageFlags::TRANSFER_SRC,
        );
        let perm = Image::new(gpu, "noise perm table", desc)?;
        let grad = Image::new(gpu, "noise grad table", desc)?;
        let bytes = (TABLE_SIZE * TABLE_SIZE * 4) as u64;
        let mut perm_up = Buffer::new(gpu, "perm upload", BufferDesc::upload(bytes))?;
        let mut grad_up = Buffer::new(gpu, "grad upload", BufferDesc::upload(bytes))?;
        perm_up.write(tables.perm_bytes())?;
        grad_up.write(tables.grad_bytes())?;
        {
            let mut rec = Recorder::new(gpu)?;
            rec.buffer(&perm_up, Access::HostWrite);
            rec.buffer(&grad_up, Access::HostWrite);
            rec.copy_buffer_to_image(&perm_up, &perm);
            rec.copy_buffer_to_image(&grad_up, &grad);
            rec.image(&perm, Access::ComputeSampledRead);
            rec.image(&grad, Access::ComputeSampledRead);
            rec.submit_and_wait()?;
        }
        Ok(Self {
            gpu: gpu.clone(),
            perm,
            grad,
            kernels: (0..NoiseKind::ALL.len()).map(|_| [None, None]).collect(),
            shared_gradients: false,
            timer: GpuTimer::new(gpu, 64)?,
            chunk_samples: CHUNK_SAMPLES,
        })
    }

    /// Caps the samples of one dispatch (whole rows; at least one row). Lower caps bound buffer
    /// sizes and submission times; results do not depend on it.
    pub fn set_chunk_samples(&mut self, samples: u64) {
        self.chunk_samples = samples.max(1);
    }

    /// Read gradients from a per-workgroup copy of the 256-entry gradient table in shared memory,
    /// or (the default) fetch them from the table image per octave, as the brush kernels do.
    /// Results are identical; the shared-memory path measured 3-25x slower on an H200
    /// (docs/PERF.md) and is kept as the bench's comparison.
    pub fn set_shared_gradients(&mut self, on: bool) {
        self.shared_gradients = on;
    }

    /// The perm and grad table images (sampled, in SHADER_READ_ONLY layout between uses).
    pub fn tables(&self) -> (&Image, &Image) {
        (&self.perm, &self.grad)
    }

    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// The perm and grad tables as the GPU holds them (read back from the images).
    pub fn read_tables(&self) -> Result<(Vec<u8>, Vec<u8>)> {
        let bytes = (TABLE_SIZE * TABLE_SIZE * 4) as u64;
        let perm_rb = Buffer::new(&self.gpu, "perm readback", BufferDesc::readback(bytes))?;
        let grad_rb = Buffer::new(&self.gpu, "grad readback", BufferDesc::readback(bytes))?;
        let mut rec = Recorder::new(&self.gpu)?;
        rec.copy_image_to_buffer(&self.perm, &perm_rb);
        rec.copy_image_to_buffer(&self.grad, &grad_rb);
        rec.image(&self.perm, Access::ComputeSampledRead);
        rec.image(&self.grad, Access::ComputeSampledRead);
        rec.buffer(&perm_rb, Access::HostRead);
        rec.buffer(&grad_rb, Access::HostRead);
        rec.submit_and_wait()?;
        Ok((
            perm_rb.mapped(bytes as usize)?.to_vec(),
            grad_rb.mapped(bytes as usize)?.to_vec(),
        ))
    }

    fn kernel(&mut self, kind: NoiseKind) -> Result<&ComputeKernel<NoiseGenPush>> {
        let shared = self.shared_gradients;
        let slot = &mut self.kernels[kind.index() as usize][usize::from(shared)];
        if slot.is_none() {
            *slot = Some(ComputeKernel::new(
                &self.gpu,
                &shaders::NOISE_GENERATE_COMP,
                &[
                    BindingKind::SampledImage,
                    BindingKind::SampledImage,
                    BindingKind::StorageBuffer,
                ],
                &[kind.index(), i32::from(shared)],
            )?);
        }
        Ok(slot.as_ref().expect("kernel built above"))
    }

    /// Generates `width` x `height` samples of `settings` (validated by the caller).
    pub fn generate(
        &mut self,
        settings: &NoiseSettings,
        width: u32,
        height: u32,
    ) -> Result<GpuNoiseRun, NoiseError> {
        settings.validate().map_err(NoiseError::Settings)?;
        if width == 0 || height == 0 {
            return Err(NoiseError::EmptyGrid);
        }
        let max_range = u64::from(self.gpu.info().max_storage_buffer_range) / 4;
        let max_rows_by_dispatch =
            u64::from(self.gpu.info().max_compute_workgroups[1]) * u64::from(GROUP[1]);
        let rows_per_chunk = (self.chunk_samples.min(max_range) / u64::from(width))
            .clamp(1, max_rows_by_dispatch) as u32;
        let chunk_rows = rows_per_chunk.min(height);
        let chunk_bytes = u64::from(chunk_rows) * u64::from(width) * 4;
        let out = Buffer::new(
            &self.gpu,
            "noise heights",
            BufferDesc::new(chunk_bytes)
                .usage(vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_SRC),
        )?;
        let readback = Buffer::new(
            &self.gpu,
            "noise readback",
            BufferDesc::readback(chunk_bytes),
        )?;

        // Build the pipeline before borrowing the tables for the descriptor set.
        self.kernel(settings.kind)?;
        let kernel = self.kernels[settings.kind.index() as usize]
            [usize::from(self.shared_gradients)]
        .as_ref()
        .expect("built above");
        let set = kernel.bind(&[
            Resource::SampledImage(&self.perm),
            Resource::SampledImage(&self.grad),
            Resource::StorageBuffer(&out),
        ])?;
        let params = settings.params();
        let label = format!("noise {}", settings.kind.name());

        let mut heights = Vec::with_capacity(width as usize * height as usize);
        let mut gpu_ns = self.timer.as_ref().map(|_| 0.0);
        let mut row = 0u32;
        while row < height {
            let rows = chunk_rows.min(height - row);
            let push = NoiseGenPush {
                noise: params,
                grid: NoiseGrid {
                    width,
                    rows,
                    row_offset: row,
                    _pad: 0,
                },
            };
            let groups = [width.div_ceil(GROUP[0]), rows.div_ceil(GROUP[1]), 1];
            let bytes = u64::from(rows) * u64::from(width) * 4;
            let mut rec = Recorder::new(&self.gpu)?;
            if let Some(t) = &self.timer {
                rec.reset_timer(t);
            }
            rec.pass(kernel, &set)
                .read_image(&self.perm)
                .read_image(&self.grad)
                .write_buffer(&out)
                .push(&push)
                .timed(self.timer.as_ref(), &label)
                .dispatch(groups)?;
            rec.copy_buffer(&out, 0, &readback, 0, bytes);
            rec.buffer(&readback, Access::HostRead);
            rec.submit_and_wait()?;
            if let (Some(t), Some(total)) = (&self.timer, gpu_ns.as_mut()) {
                *total += t.results()?.iter().map(|p| p.gpu_ns).sum::<f64>();
            }
            heights.extend_from_slice(bytemuck::cast_slice::<u8, f32>(
                readback.mapped(bytes as usize)?,
            ));
            row += rows;
        }
        Ok(GpuNoiseRun { heights, gpu_ns })
    }
}

//! The path kernel's host side: a plan's segments and tile lists and the rect's heights go up,
//! `path.comp` runs once over the rect, the heights come back (src/brush/path.rs).

use super::path::{PathPlan, TILE};
use super::shared::PathPush;
use crate::gpu::{
    shaders, vk, Access, BindingKind, Buffer, BufferDesc, ComputeKernel, Gpu, GpuError,
    MemoryLocation, Recorder, Resource, Result,
};
use std::sync::Arc;

/// The path kernel, built once.
pub struct GpuPath {
    gpu: Arc<Gpu>,
    kernel: ComputeKernel<PathPush>,
}

impl GpuPath {
    pub fn new(gpu: &Arc<Gpu>) -> Result<Self> {
        Ok(Self {
            gpu: gpu.clone(),
            kernel: ComputeKernel::new(
                gpu,
                &shaders::BRUSH_PATH_COMP,
                &[BindingKind::StorageBuffer; 4],
                &[],
            )?,
        })
    }

    /// The most texels one rect may hold on this GPU (one storage buffer).
    pub fn max_texels(gpu: &Gpu) -> u64 {
        u64::from(gpu.info().max_storage_buffer_range) / 4
    }

    /// A host-visible storage buffer holding `data` (at least one word).
    fn input<T: bytemuck::Pod>(&self, name: &str, data: &[T]) -> Result<Buffer> {
        let bytes = (std::mem::size_of_val(data) as u64).max(4);
        let mut b = Buffer::new(
            &self.gpu,
            name,
            BufferDesc::new(bytes)
                .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                .location(MemoryLocation::CpuToGpu),
        )?;
        if !data.is_empty() {
            b.write(data)?;
        }
        Ok(b)
    }

    /// Runs `plan` over `values` (row-major over `plan.rect`) in place.
    pub fn apply(&self, plan: &PathPlan, values: &mut [f32]) -> Result<()> {
        let [w, h] = plan.push.rect_size;
        if values.len() as u64 != u64::from(w) * u64::from(h) {
            return Err(GpuError::usage(format!(
                "path: {} heights for a {w}x{h} rect",
                values.len()
            )));
        }
        if values.is_empty() {
            return Ok(());
        }
        let bytes = std::mem::size_of_val(values) as u64;
        let mut heights = Buffer::new(
            &self.gpu,
            "path heights",
            BufferDesc::new(bytes)
                .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                .location(MemoryLocation::GpuToCpu),
        )?;
        heights.write(values)?;
        let segments = self.input("path segments", &plan.segments)?;
        let starts = self.input("path tile starts", &plan.tile_start)?;
        let lists = self.input("path tile segments", &plan.tile_segments)?;
        let set = self.kernel.bind(&[
            Resource::StorageBuffer(&heights),
            Resource::StorageBuffer(&segments),
            Resource::StorageBuffer(&starts),
            Resource::StorageBuffer(&lists),
        ])?;
        let mut rec = Recorder::new(&self.gpu)?;
        for b in [&heights, &segments, &starts, &lists] {
            rec.buffer(b, Access::HostWrite);
        }
        rec.pass(&self.kernel, &set)
            .read_write_buffer(&heights)
            .read_buffer(&segments)
            .read_buffer(&starts)
            .read_buffer(&lists)
            .push(&plan.push)
            .dispatch([w.div_ceil(TILE), h.div_ceil(TILE), 1])?;
        rec.buffer(&heights, Access::HostRead);
        rec.submit_and_wait()?;
        values.copy_from_slice(bytemuck::cast_slice(heights.mapped(bytes as usize)?));
        Ok(())
    }
}

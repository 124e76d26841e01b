//! The maps' kernels over one region in storage buffers (row-major heights in, maps out).

use super::MapsPush;
use crate::gpu::{
    shaders, Access, BindingKind, Buffer, BufferDesc, ComputeKernel, Gpu, GpuError, Recorder,
    Resource, Result,
};
use std::sync::Arc;

/// The weight-map pipeline.
pub struct Kernels {
    weights: ComputeKernel<MapsPush>,
}

impl Kernels {
    pub fn new(gpu: &Arc<Gpu>) -> Result<Self> {
        let kinds = [BindingKind::StorageBuffer; 3];
        Ok(Self {
            weights: ComputeKernel::new(gpu, &shaders::MAPS_WEIGHTS_COMP, &kinds, &[])?,
        })
    }

    /// Texels the largest region may have on `gpu` (its weights are one binding, its surface
    /// maps another).
    pub fn max_texels(gpu: &Gpu) -> u64 {
        u64::from(gpu.info().max_storage_buffer_range) / 20
    }

    /// The material weights (5 per texel, row-major) of the region of heights `h` (height
    /// units, `p.size` row-major).
    pub fn weights(&self, gpu: &Arc<Gpu>, h: &[f32], p: &MapsPush) -> Result<Vec<f32>> {
        Ok(self.run(gpu, h, p)?.weights)
    }

    /// The material weights and the surface maps (slope and curvatures) of the region of heights
    /// `h`.
    pub fn run(&self, gpu: &Arc<Gpu>, h: &[f32], p: &MapsPush) -> Result<super::Maps> {
        let n = (p.size[0] as u64) * (p.size[1] as u64);
        if n > Self::max_texels(gpu) {
            return Err(GpuError::Unsupported(format!(
                "a {n}-texel map region is past what {} binds at once",
                gpu.info().name
            )));
        }
        let (hb, wb, fb) = (n * 4, n * 20, n * 4 * super::Surface::COUNT as u64);
        let heights = Buffer::new(gpu, "maps heights", BufferDesc::storage_copyable(hb))?;
        let out = Buffer::new(gpu, "maps weights", BufferDesc::storage_copyable(wb))?;
        let fields = Buffer::new(gpu, "maps surface", BufferDesc::storage_copyable(fb))?;
        let mut upload = Buffer::new(gpu, "maps upload", BufferDesc::upload(hb))?;
        let readback = Buffer::new(gpu, "maps readback", BufferDesc::readback(wb + fb))?;
        upload.write(h)?;
        let set = self.weights.bind(&[
            Resource::StorageBuffer(&heights),
            Resource::StorageBuffer(&out),
            Resource::StorageBuffer(&fields),
        ])?;
        let mut rec = Recorder::new(gpu)?;
        rec.buffer(&upload, Access::HostWrite);
        rec.copy_buffer(&upload, 0, &heights, 0, hb);
        let groups = [
            (p.size[0] as u32).div_ceil(16),
            (p.size[1] as u32).div_ceil(16),
            1,
        ];
        rec.pass(&self.weights, &set)
            .read_buffer(&heights)
            .write_buffer(&out)
            .write_buffer(&fields)
            .push(p)
            .dispatch(groups)?;
        rec.copy_buffer(&out, 0, &readback, 0, wb);
        rec.copy_buffer(&fields, 0, &readback, wb, fb);
        rec.buffer(&readback, Access::HostRead);
        rec.submit_and_wait()?;
        let all = bytemuck::cast_slice::<u8, f32>(readback.mapped((wb + fb) as usize)?);
        let (w, f) = all.split_at((n * 5) as usize);
        Ok(super::Maps {
            weights: w.to_vec(),
            surface: f.to_vec(),
        })
    }
}

//! The maps' kernels over one region in storage buffers (row-major heights in, maps out).

use super::MapsPush;
use crate::gpu::{
    shaders, Access, BindingKind, Buffer, BufferDesc, ComputeKernel, Gpu, GpuError, Recorder,
    Resource, Result,
};
use crate::pages::geometry::Region;
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
    /// `h`. A region past what the device binds at once runs in bands of rows, each with a row
    /// around it (its texels' neighbours): the same maps as one run, bit for bit.
    pub fn run(&self, gpu: &Arc<Gpu>, h: &[f32], p: &MapsPush) -> Result<super::Maps> {
        self.run_within(gpu, h, p, Self::max_texels(gpu))
    }

    /// [`Self::run`] with at most `most` texels a run (at most what `gpu` binds).
    pub fn run_within(
        &self,
        gpu: &Arc<Gpu>,
        h: &[f32],
        p: &MapsPush,
        most: u64,
    ) -> Result<super::Maps> {
        let [w, ht] = p.size.map(|v| v as u32);
        let most = most.min(Self::max_texels(gpu));
        if u64::from(w) * u64::from(ht) <= most {
            return self.run_whole(gpu, h, p);
        }
        let rows = (most / u64::from(w)).saturating_sub(2).min(u64::from(ht)) as u32;
        if rows == 0 {
            return Err(GpuError::Unsupported(format!(
                "a map region {w} texels wide is past what {} binds at once",
                gpu.info().name
            )));
        }
        let mut maps = super::Maps::default();
        for y in (0..ht).step_by(rows as usize) {
            let band = Region {
                x: 0,
                y,
                width: w,
                height: rows.min(ht - y),
            };
            let (outer, inner) = band.apron([w, ht]);
            let push = MapsPush {
                size: [w as i32, outer.height as i32],
                origin: [p.origin[0], p.origin[1] + outer.y as i32],
                ..*p
            };
            let part = self.run_whole(gpu, &outer.cut(h, w), &push)?;
            maps.weights.extend(inner.cut_channels(&part.weights, w, 5));
            let surface = super::Surface::COUNT;
            maps.surface
                .extend(inner.cut_channels(&part.surface, w, surface));
        }
        Ok(maps)
    }

    fn run_whole(&self, gpu: &Arc<Gpu>, h: &[f32], p: &MapsPush) -> Result<super::Maps> {
        let n = (p.size[0] as u64) * (p.size[1] as u64);
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

//! The map kernels a job runs, on the GPU or as their CPU twins (`--backend`): a region's
//! material weights and surface maps, and its D8 drainage.

use super::{cpu, drainage, flow, gpu, Maps, MapsPush};
use crate::gpu::{Gpu, Result};
use crate::pages::DocumentDesc;
use std::sync::Arc;

/// The map kernels of one backend.
pub trait MapKernels {
    /// The material weights and surface maps of the region of heights `h` (`push.size`).
    fn maps(&mut self, h: &[f32], push: &MapsPush) -> Result<Maps>;
    /// The D8 drainage areas (m²) of the region of heights `h` (height units of `desc`, `size`
    /// texels, row-major), as [`flow::drainage`] defines them.
    fn drainage(&mut self, h: &[f32], size: [u32; 2], desc: &DocumentDesc) -> Result<Vec<f64>>;
}

/// The CPU twins.
pub struct Cpu;

impl MapKernels for Cpu {
    fn maps(&mut self, h: &[f32], push: &MapsPush) -> Result<Maps> {
        Ok(cpu::maps_region(h, push))
    }

    fn drainage(&mut self, h: &[f32], size: [u32; 2], desc: &DocumentDesc) -> Result<Vec<f64>> {
        Ok(flow::drainage(h, size, desc))
    }
}

/// The GPU's kernels.
pub struct OnGpu {
    gpu: Arc<Gpu>,
    maps: gpu::Kernels,
    drainage: drainage::Kernels,
}

impl OnGpu {
    pub fn new(gpu: &Arc<Gpu>) -> Result<Self> {
        Ok(Self {
            gpu: gpu.clone(),
            maps: gpu::Kernels::new(gpu)?,
            drainage: drainage::Kernels::new(gpu)?,
        })
    }
}

impl MapKernels for OnGpu {
    fn maps(&mut self, h: &[f32], push: &MapsPush) -> Result<Maps> {
        self.maps.run(&self.gpu, h, push)
    }

    /// A region past what the device binds at once is counted by the CPU: the same areas, bit for
    /// bit.
    fn drainage(&mut self, h: &[f32], size: [u32; 2], desc: &DocumentDesc) -> Result<Vec<f64>> {
        if u64::from(size[0]) * u64::from(size[1]) > drainage::Kernels::max_texels(&self.gpu) {
            return Ok(flow::drainage(h, size, desc));
        }
        let z = flow::metres(h, desc);
        let tau = desc.texel_size() as f32;
        let counts = self.drainage.counts(&self.gpu, &z, size, tau, None)?;
        Ok(drainage::areas(&counts, drainage::push(size, tau).a0))
    }
}

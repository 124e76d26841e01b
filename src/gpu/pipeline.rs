//! Typed compute kernels. A [`ComputeKernel<P>`] owns its pipeline, pipeline layout and descriptor
//! set layouts (the [`super::graphics`] objects); `P` is its push-constant struct (`#[repr(C)]` +
//! `Pod`, mirrored in GLSL), so a kernel can't be dispatched with the wrong parameters. Bindings
//! are numbered in the order they are declared, all in set 0 unless several sets are given.

use super::buffer::Buffer;
use super::context::Gpu;
use super::error::{GpuError, Result};
use super::graphics::{ComputePipeline, DescriptorKind, LayoutBinding, PipelineLayout, SetLayout};
use super::image::Image;
use super::retire::{Garbage, PoolSizes};
use super::shaders::Shader;
use ash::vk;
use std::marker::PhantomData;
use std::sync::Arc;

/// Vulkan guarantees at least this many bytes of push constants.
const MAX_PUSH_BYTES: usize = 128;

/// The kind of one binding of a kernel's set 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindingKind {
    SampledImage,
    StorageImage,
    StorageBuffer,
}

impl BindingKind {
    fn kind(self) -> DescriptorKind {
        match self {
            BindingKind::SampledImage => DescriptorKind::SampledImage,
            BindingKind::StorageImage => DescriptorKind::StorageImage,
            BindingKind::StorageBuffer => DescriptorKind::StorageBuffer,
        }
    }

    fn descriptor_type(self) -> vk::DescriptorType {
        self.kind().raw()
    }
}

/// A resource bound at one binding.
#[derive(Clone, Copy)]
pub enum Resource<'a> {
    SampledImage(&'a Image),
    StorageImage(&'a Image),
    StorageBuffer(&'a Buffer),
}

impl Resource<'_> {
    fn kind(&self) -> BindingKind {
        match self {
            Resource::SampledImage(_) => BindingKind::SampledImage,
            Resource::StorageImage(_) => BindingKind::StorageImage,
            Resource::StorageBuffer(_) => BindingKind::StorageBuffer,
        }
    }
}

/// A compute pipeline with push constants `P`.
pub struct ComputeKernel<P> {
    gpu: Arc<Gpu>,
    name: String,
    /// Bindings of set i, numbered in order.
    sets: Vec<Vec<BindingKind>>,
    /// A compile still running on a thread of its own ([`Self::compiling`]) is waited for
    /// before `layout` is destroyed: by this kernel's drop, and by the field order.
    pub(crate) pipeline: ComputePipeline,
    pub(crate) layout: PipelineLayout,
    set_layouts: Vec<SetLayout>,
    _params: PhantomData<fn(P)>,
}

impl<P> Drop for ComputeKernel<P> {
    fn drop(&mut self) {
        // The compile's thread uses the layout until it ends (an error is the pipeline's own).
        let _ = self.pipeline.raw();
    }
}

impl<P: bytemuck::Pod> ComputeKernel<P> {
    /// Builds the kernel from `shader` with `bindings` in set 0 and specialization constants
    /// `spec[i]` at `constant_id = i`.
    pub fn new(
        gpu: &Arc<Gpu>,
        shader: &Shader,
        bindings: &[BindingKind],
        spec: &[i32],
    ) -> Result<Self> {
        Self::with_sets(gpu, shader, &[bindings], spec)
    }

    /// Like [`Self::new`], its pipeline compiled on a thread of its own: this returns once the
    /// layouts are made, so sets can be bound at once, and the first dispatch waits for the
    /// compile ([`ComputePipeline::compiling`]: for kernels the driver is slow to compile).
    pub fn compiling(
        gpu: &Arc<Gpu>,
        shader: &Shader,
        bindings: &[BindingKind],
        spec: &[i32],
    ) -> Result<Self> {
        Self::made(gpu, shader, &[bindings], spec, ComputePipeline::compiling)
    }

    /// Like [`Self::new`] with several descriptor sets: `sets[i]` lists the bindings of set i.
    /// Sets made by [`Self::bind`] work with every kernel whose set i has the same bindings.
    pub fn with_sets(
        gpu: &Arc<Gpu>,
        shader: &Shader,
        sets: &[&[BindingKind]],
        spec: &[i32],
    ) -> Result<Self> {
        Self::made(gpu, shader, sets, spec, ComputePipeline::specialized)
    }

    /// The kernel's layouts, and its pipeline made by `pipeline`.
    fn made(
        gpu: &Arc<Gpu>,
        shader: &Shader,
        sets: &[&[BindingKind]],
        spec: &[i32],
        pipeline: impl FnOnce(
            &Arc<Gpu>,
            &str,
            &PipelineLayout,
            &Shader,
            &[i32],
        ) -> Result<ComputePipeline>,
    ) -> Result<Self> {
        let push_bytes = std::mem::size_of::<P>();
        if push_bytes > MAX_PUSH_BYTES {
            return Err(GpuError::usage(format!(
                "{}: {push_bytes} push-constant bytes exceed {MAX_PUSH_BYTES}",
                shader.name
            )));
        }
        let set_layouts = sets
            .iter()
            .map(|bindings| {
                let b: Vec<LayoutBinding> = bindings
                    .iter()
                    .map(|k| LayoutBinding::new(k.kind(), vk::ShaderStageFlags::COMPUTE))
                    .collect();
                SetLayout::new(gpu, &b)
            })
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<&SetLayout> = set_layouts.iter().collect();
        let layout =
            PipelineLayout::new(gpu, &refs, vk::ShaderStageFlags::COMPUTE, push_bytes as u32)?;
        let name = format!("{}{spec:?}", shader.name);
        let pipeline = pipeline(gpu, &name, &layout, shader, spec)?;
        Ok(Self {
            gpu: gpu.clone(),
            name,
            sets: sets.iter().map(|b| b.to_vec()).collect(),
            pipeline,
            layout,
            set_layouts,
            _params: PhantomData,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// A descriptor set for set 0 binding `resources` (in binding order).
    pub fn bind(&self, resources: &[Resource<'_>]) -> Result<DescriptorSet> {
        self.bind_set(0, resources)
    }

    /// A descriptor set for set `index` binding `resources` (in binding order).
    pub fn bind_set(&self, index: usize, resources: &[Resource<'_>]) -> Result<DescriptorSet> {
        let bindings = self
            .sets
            .get(index)
            .ok_or_else(|| GpuError::usage(format!("{}: no descriptor set {index}", self.name)))?;
        if resources.len() != bindings.len()
            || resources.iter().zip(bindings).any(|(r, b)| r.kind() != *b)
        {
            return Err(GpuError::usage(format!(
                "{}: resources {:?} do not match set {index}'s bindings {:?}",
                self.name,
                resources.iter().map(Resource::kind).collect::<Vec<_>>(),
                bindings
            )));
        }
        DescriptorSet::new(&self.gpu, self.set_layouts[index].raw, resources)
    }

    /// Number of descriptor sets the kernel binds.
    pub fn set_count(&self) -> usize {
        self.sets.len()
    }
}

/// One descriptor set with its own small pool. Dropped, the pool is reset and reused by a later
/// set of the same sizes once no submission can use it: making and destroying a pool for every
/// set cost about 5 µs a set on NVIDIA, and frames bind several sets per edited page.
pub struct DescriptorSet {
    gpu: Arc<Gpu>,
    pool: vk::DescriptorPool,
    sizes: PoolSizes,
    pub(crate) raw: vk::DescriptorSet,
}

impl DescriptorSet {
    fn new(
        gpu: &Arc<Gpu>,
        layout: vk::DescriptorSetLayout,
        resources: &[Resource<'_>],
    ) -> Result<Self> {
        let device = gpu.device();
        let mut sizes: Vec<vk::DescriptorPoolSize> = Vec::new();
        for r in resources {
            let ty = r.kind().descriptor_type();
            match sizes.iter_mut().find(|s| s.ty == ty) {
                Some(s) => s.descriptor_count += 1,
                None => sizes.push(vk::DescriptorPoolSize {
                    ty,
                    descriptor_count: 1,
                }),
            }
        }
        let mut key: PoolSizes = sizes
            .iter()
            .map(|s| (s.ty.as_raw(), s.descriptor_count))
            .collect();
        key.sort_unstable();
        let pool = match gpu.take_spare_pool(&key) {
            Some(pool) => pool,
            None => {
                let pool_info = vk::DescriptorPoolCreateInfo::default()
                    .max_sets(1)
                    .pool_sizes(&sizes);
                // SAFETY: valid device and sizes.
                unsafe { device.create_descriptor_pool(&pool_info, None)? }
            }
        };
        let layouts = [layout];
        // SAFETY: the pool has room for exactly this set.
        let raw = match unsafe {
            device.allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(pool)
                    .set_layouts(&layouts),
            )
        } {
            Ok(sets) => sets[0],
            Err(e) => {
                gpu.keep_spare_pool(pool, key);
                return Err(e.into());
            }
        };
        let image_infos: Vec<[vk::DescriptorImageInfo; 1]> = resources
            .iter()
            .map(|r| match r {
                Resource::SampledImage(img) => [vk::DescriptorImageInfo {
                    sampler: gpu.nearest_sampler(),
                    image_view: img.view,
                    image_layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
                }],
                Resource::StorageImage(img) => [vk::DescriptorImageInfo {
                    sampler: vk::Sampler::null(),
                    image_view: img.view,
                    image_layout: vk::ImageLayout::GENERAL,
                }],
                Resource::StorageBuffer(_) => [vk::DescriptorImageInfo::default()],
            })
            .collect();
        let buffer_infos: Vec<[vk::DescriptorBufferInfo; 1]> = resources
            .iter()
            .map(|r| match r {
                Resource::StorageBuffer(b) => [vk::DescriptorBufferInfo {
                    buffer: b.raw,
                    offset: 0,
                    range: vk::WHOLE_SIZE,
                }],
                _ => [vk::DescriptorBufferInfo::default()],
            })
            .collect();
        let writes: Vec<_> = resources
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let w = vk::WriteDescriptorSet::default()
                    .dst_set(raw)
                    .dst_binding(i as u32)
                    .descriptor_type(r.kind().descriptor_type());
                match r {
                    Resource::StorageBuffer(_) => w.buffer_info(&buffer_infos[i]),
                    _ => w.image_info(&image_infos[i]),
                }
            })
            .collect();
        // SAFETY: the set, views and buffers are valid; infos outlive the call.
        unsafe { device.update_descriptor_sets(&writes, &[]) };
        Ok(Self {
            gpu: gpu.clone(),
            pool,
            sizes: key,
            raw,
        })
    }
}

impl Drop for DescriptorSet {
    fn drop(&mut self) {
        // Reset and kept for reuse once no detached submission that may bind it is pending.
        let sizes = std::mem::take(&mut self.sizes);
        self.gpu.release(Garbage::SparePool(self.pool, sizes));
    }
}

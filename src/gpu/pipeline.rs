//! Typed compute kernels. A [`ComputeKernel<P>`] owns its pipeline, pipeline layout and descriptor
//! set layout; `P` is its push-constant struct (`#[repr(C)]` + `Pod`, mirrored in GLSL), so a
//! kernel can't be dispatched with the wrong parameters. Bindings are numbered in the order they
//! are declared, all in set 0.

use super::buffer::Buffer;
use super::context::Gpu;
use super::error::{GpuError, Result};
use super::image::Image;
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
    fn descriptor_type(self) -> vk::DescriptorType {
        match self {
            BindingKind::SampledImage => vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
            BindingKind::StorageImage => vk::DescriptorType::STORAGE_IMAGE,
            BindingKind::StorageBuffer => vk::DescriptorType::STORAGE_BUFFER,
        }
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
    set_layouts: Vec<vk::DescriptorSetLayout>,
    pub(crate) layout: vk::PipelineLayout,
    pub(crate) pipeline: vk::Pipeline,
    _params: PhantomData<fn(P)>,
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

    /// Like [`Self::new`] with several descriptor sets: `sets[i]` lists the bindings of set i.
    /// Sets made by [`Self::bind`] work with every kernel whose set i has the same bindings.
    pub fn with_sets(
        gpu: &Arc<Gpu>,
        shader: &Shader,
        sets: &[&[BindingKind]],
        spec: &[i32],
    ) -> Result<Self> {
        let push_bytes = std::mem::size_of::<P>();
        if push_bytes > MAX_PUSH_BYTES {
            return Err(GpuError::usage(format!(
                "{}: {push_bytes} push-constant bytes exceed {MAX_PUSH_BYTES}",
                shader.name
            )));
        }
        let device = gpu.device();
        let code = shader.words()?;
        // SAFETY: `code` is SPIR-V produced by shaderc at build time.
        let module = unsafe {
            device.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&code), None)?
        };
        let mut handles = Handles {
            device,
            module,
            set_layouts: Vec::new(),
            layout: vk::PipelineLayout::null(),
        };
        for bindings in sets {
            let layout_bindings: Vec<_> = bindings
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    vk::DescriptorSetLayoutBinding::default()
                        .binding(i as u32)
                        .descriptor_type(b.descriptor_type())
                        .descriptor_count(1)
                        .stage_flags(vk::ShaderStageFlags::COMPUTE)
                })
                .collect();
            // SAFETY: valid device and bindings.
            let set_layout = unsafe {
                device.create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&layout_bindings),
                    None,
                )?
            };
            handles.set_layouts.push(set_layout);
        }
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .size(push_bytes as u32)];
        let mut layout_info =
            vk::PipelineLayoutCreateInfo::default().set_layouts(&handles.set_layouts);
        if push_bytes > 0 {
            layout_info = layout_info.push_constant_ranges(&ranges);
        }
        // SAFETY: valid device and set layouts.
        handles.layout = unsafe { device.create_pipeline_layout(&layout_info, None)? };

        let entries: Vec<_> = (0..spec.len())
            .map(|i| vk::SpecializationMapEntry {
                constant_id: i as u32,
                offset: (i * 4) as u32,
                size: 4,
            })
            .collect();
        let spec_data: &[u8] = bytemuck::cast_slice(spec);
        let spec_info = vk::SpecializationInfo::default()
            .map_entries(&entries)
            .data(spec_data);
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(c"main")
            .specialization_info(&spec_info);
        let info = vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(handles.layout);
        // SAFETY: module, layout and specialization data are valid for the call.
        let pipeline =
            unsafe { device.create_compute_pipelines(vk::PipelineCache::null(), &[info], None) }
                .map_err(|(_, e)| GpuError::from(e))?[0];
        let name = format!("{}{spec:?}", shader.name);
        gpu.set_name(pipeline, &name);
        let (set_layouts, layout) = handles.keep();
        Ok(Self {
            gpu: gpu.clone(),
            name,
            sets: sets.iter().map(|b| b.to_vec()).collect(),
            set_layouts,
            layout,
            pipeline,
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
        DescriptorSet::new(&self.gpu, self.set_layouts[index], resources)
    }

    /// Number of descriptor sets the kernel binds.
    pub fn set_count(&self) -> usize {
        self.sets.len()
    }
}

impl<P> Drop for ComputeKernel<P> {
    fn drop(&mut self) {
        let device = self.gpu.device();
        // SAFETY: submissions complete before recording APIs return; no set outlives its use.
        unsafe {
            device.destroy_pipeline(self.pipeline, None);
            device.destroy_pipeline_layout(self.layout, None);
            for &l in &self.set_layouts {
                device.destroy_descriptor_set_layout(l, None);
            }
        }
    }
}

/// Objects of a kernel under construction: destroyed on an early return, kept by `keep`.
struct Handles<'d> {
    device: &'d ash::Device,
    module: vk::ShaderModule,
    set_layouts: Vec<vk::DescriptorSetLayout>,
    layout: vk::PipelineLayout,
}

impl Handles<'_> {
    fn keep(mut self) -> (Vec<vk::DescriptorSetLayout>, vk::PipelineLayout) {
        let kept = (std::mem::take(&mut self.set_layouts), self.layout);
        self.layout = vk::PipelineLayout::null();
        kept
    }
}

impl Drop for Handles<'_> {
    fn drop(&mut self) {
        // SAFETY: these objects are not used by any pipeline still being created; destroying a
        // null handle is a no-op.
        unsafe {
            self.device.destroy_shader_module(self.module, None);
            self.device.destroy_pipeline_layout(self.layout, None);
            for &l in &self.set_layouts {
                self.device.destroy_descriptor_set_layout(l, None);
            }
        }
    }
}

/// One descriptor set with its own small pool (freed together on drop).
pub struct DescriptorSet {
    gpu: Arc<Gpu>,
    pool: vk::DescriptorPool,
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
        let pool_info = vk::DescriptorPoolCreateInfo::default()
            .max_sets(1)
            .pool_sizes(&sizes);
        // SAFETY: valid device and sizes.
        let pool = unsafe { device.create_descriptor_pool(&pool_info, None)? };
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
                // SAFETY: unused pool.
                unsafe { device.destroy_descriptor_pool(pool, None) };
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
            raw,
        })
    }
}

impl Drop for DescriptorSet {
    fn drop(&mut self) {
        // SAFETY: submissions complete before recording APIs return.
        unsafe { self.gpu.device().destroy_descriptor_pool(self.pool, None) };
    }
}

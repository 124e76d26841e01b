//! Pipelines beyond the typed compute kernels: descriptor set layouts of any binding type, count
//! and stage; sets allocated from pools made as needed and pointed at resources binding by
//! binding; pipeline layouts with push constants; graphics pipelines for dynamic rendering and
//! compute pipelines over such layouts. Recording with them is in [`super::Recorder`]
//! (`bind_graphics`, `bind_compute`, `bind_sets`, `push_constants`, `draw_indexed`, `dispatch`).

use super::buffer::Buffer;
use super::context::Gpu;
use super::error::{GpuError, Result};
use super::image::Image;
use super::retire::Garbage;
use super::shaders::Shader;
use ash::vk;
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

/// The type of one binding of a [`SetLayout`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DescriptorKind {
    UniformBuffer,
    StorageBuffer,
    /// A storage buffer whose offset is given when the set is bound.
    StorageBufferDynamic,
    StorageImage,
    /// An image read through the device's nearest sampler (combined image sampler).
    SampledImage,
}

impl DescriptorKind {
    pub(crate) fn raw(self) -> vk::DescriptorType {
        match self {
            Self::UniformBuffer => vk::DescriptorType::UNIFORM_BUFFER,
            Self::StorageBuffer => vk::DescriptorType::STORAGE_BUFFER,
            Self::StorageBufferDynamic => vk::DescriptorType::STORAGE_BUFFER_DYNAMIC,
            Self::StorageImage => vk::DescriptorType::STORAGE_IMAGE,
            Self::SampledImage => vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
        }
    }
}

/// One binding: its type, how many array elements, the stages that read it.
#[derive(Clone, Copy, Debug)]
pub struct LayoutBinding {
    pub kind: DescriptorKind,
    pub count: u32,
    pub stages: vk::ShaderStageFlags,
}

impl LayoutBinding {
    pub fn new(kind: DescriptorKind, stages: vk::ShaderStageFlags) -> Self {
        Self {
            kind,
            count: 1,
            stages,
        }
    }

    /// An array of `count` elements.
    pub fn array(self, count: u32) -> Self {
        Self { count, ..self }
    }
}

/// A descriptor set layout; bindings are numbered in the order given.
pub struct SetLayout {
    gpu: Arc<Gpu>,
    pub(crate) raw: vk::DescriptorSetLayout,
    pub(crate) bindings: Vec<LayoutBinding>,
}

impl SetLayout {
    pub fn new(gpu: &Arc<Gpu>, bindings: &[LayoutBinding]) -> Result<Self> {
        let raw_bindings: Vec<_> = bindings
            .iter()
            .enumerate()
            .map(|(i, b)| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(i as u32)
                    .descriptor_type(b.kind.raw())
                    .descriptor_count(b.count)
                    .stage_flags(b.stages)
            })
            .collect();
        // SAFETY: valid device and bindings.
        let raw = unsafe {
            gpu.device().create_descriptor_set_layout(
                &vk::DescriptorSetLayoutCreateInfo::default().bindings(&raw_bindings),
                None,
            )?
        };
        Ok(Self {
            gpu: gpu.clone(),
            raw,
            bindings: bindings.to_vec(),
        })
    }
}

impl Drop for SetLayout {
    fn drop(&mut self) {
        // SAFETY: pipelines and pools made from the layout hold what they need of it.
        unsafe {
            self.gpu
                .device()
                .destroy_descriptor_set_layout(self.raw, None)
        };
    }
}

/// A descriptor set allocated from a [`SetPool`] (valid while the pool lives; the default is
/// no set).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SetHandle(pub(crate) vk::DescriptorSet);

/// What one binding of a set points at.
pub enum Bound<'a> {
    /// A uniform or storage buffer, from offset 0: `range` bytes (None: the whole buffer; for
    /// a dynamic binding, the bytes each bound offset sees).
    Buffer(&'a Buffer, Option<u64>),
    /// Storage images in GENERAL layout, one per array element.
    StorageImages(&'a [&'a Image]),
    /// An image read through the device's nearest sampler, in SHADER_READ_ONLY_OPTIMAL layout.
    SampledImage(&'a Image),
}

/// Sets of one layout, from pools made as needed (`per_pool` sets each); all freed on drop.
pub struct SetPool {
    gpu: Arc<Gpu>,
    layout: vk::DescriptorSetLayout,
    kinds: Vec<LayoutBinding>,
    sizes: Vec<vk::DescriptorPoolSize>,
    per_pool: u32,
    pools: Vec<vk::DescriptorPool>,
}

impl SetPool {
    pub fn new(layout: &SetLayout, per_pool: u32) -> Self {
        let mut sizes: Vec<vk::DescriptorPoolSize> = Vec::new();
        for b in &layout.bindings {
            let ty = b.kind.raw();
            match sizes.iter_mut().find(|s| s.ty == ty) {
                Some(s) => s.descriptor_count += b.count * per_pool,
                None => sizes.push(vk::DescriptorPoolSize {
                    ty,
                    descriptor_count: b.count * per_pool,
                }),
            }
        }
        Self {
            gpu: layout.gpu.clone(),
            layout: layout.raw,
            kinds: layout.bindings.clone(),
            sizes,
            per_pool,
            pools: Vec::new(),
        }
    }

    /// A new set (its bindings unwritten).
    pub fn allocate(&mut self) -> Result<SetHandle> {
        let device = self.gpu.device();
        let layouts = [self.layout];
        if let Some(&pool) = self.pools.last() {
            // SAFETY: valid pool and layout.
            let r = unsafe {
                device.allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(pool)
                        .set_layouts(&layouts),
                )
            };
            match r {
                Ok(s) => return Ok(SetHandle(s[0])),
                Err(vk::Result::ERROR_OUT_OF_POOL_MEMORY | vk::Result::ERROR_FRAGMENTED_POOL) => {}
                Err(e) => return Err(e.into()),
            }
        }
        // SAFETY: valid device and sizes.
        let pool = unsafe {
            device.create_descriptor_pool(
                &vk::DescriptorPoolCreateInfo::default()
                    .max_sets(self.per_pool)
                    .pool_sizes(&self.sizes),
                None,
            )?
        };
        self.pools.push(pool);
        // SAFETY: a fresh pool with room for `per_pool` sets.
        let sets = unsafe {
            device.allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(pool)
                    .set_layouts(&layouts),
            )?
        };
        Ok(SetHandle(sets[0]))
    }

    /// Points binding `binding` of `set` (one of this pool's) at `what`. No submission that uses
    /// `set` may be pending (frames wait for their submissions before the next is prepared).
    pub fn write(&self, set: SetHandle, binding: u32, what: Bound<'_>) -> Result<()> {
        let b = self
            .kinds
            .get(binding as usize)
            .ok_or_else(|| GpuError::usage(format!("descriptor set has no binding {binding}")))?;
        let write = vk::WriteDescriptorSet::default()
            .dst_set(set.0)
            .dst_binding(binding)
            .descriptor_type(b.kind.raw());
        match what {
            Bound::Buffer(buffer, range) => {
                if matches!(
                    b.kind,
                    DescriptorKind::StorageImage | DescriptorKind::SampledImage
                ) {
                    return Err(GpuError::usage(format!("binding {binding} takes images")));
                }
                let info = [vk::DescriptorBufferInfo {
                    buffer: buffer.raw,
                    offset: 0,
                    range: range.unwrap_or(vk::WHOLE_SIZE),
                }];
                // SAFETY: set and buffer are valid; no pending submission uses the set.
                unsafe {
                    self.gpu
                        .device()
                        .update_descriptor_sets(&[write.buffer_info(&info)], &[])
                };
            }
            Bound::StorageImages(images) => {
                if b.kind != DescriptorKind::StorageImage || images.len() as u32 != b.count {
                    return Err(GpuError::usage(format!(
                        "binding {binding} takes {} {:?}, not {} storage images",
                        b.count,
                        b.kind,
                        images.len()
                    )));
                }
                let infos: Vec<vk::DescriptorImageInfo> = images
                    .iter()
                    .map(|img| vk::DescriptorImageInfo {
                        sampler: vk::Sampler::null(),
                        image_view: img.view,
                        image_layout: vk::ImageLayout::GENERAL,
                    })
                    .collect();
                // SAFETY: as above; the views are live.
                unsafe {
                    self.gpu
                        .device()
                        .update_descriptor_sets(&[write.image_info(&infos)], &[])
                };
            }
            Bound::SampledImage(image) => {
                if b.kind != DescriptorKind::SampledImage || b.count != 1 {
                    return Err(GpuError::usage(format!(
                        "binding {binding} takes {} {:?}, not one sampled image",
                        b.count, b.kind
                    )));
                }
                let info = [vk::DescriptorImageInfo {
                    sampler: self.gpu.nearest_sampler(),
                    image_view: image.view,
                    image_layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
                }];
                // SAFETY: as above; the view is live.
                unsafe {
                    self.gpu
                        .device()
                        .update_descriptor_sets(&[write.image_info(&info)], &[])
                };
            }
        }
        Ok(())
    }
}

impl Drop for SetPool {
    fn drop(&mut self) {
        // Destroyed once no detached submission that may bind their sets is pending.
        for &p in &self.pools {
            self.gpu.release(Garbage::DescriptorPool(p));
        }
    }
}

/// The sets a pipeline binds and its push-constant range (from offset 0).
pub struct PipelineLayout {
    gpu: Arc<Gpu>,
    pub(crate) raw: vk::PipelineLayout,
    pub(crate) push_stages: vk::ShaderStageFlags,
}

impl PipelineLayout {
    pub fn new(
        gpu: &Arc<Gpu>,
        sets: &[&SetLayout],
        push_stages: vk::ShaderStageFlags,
        push_bytes: u32,
    ) -> Result<Self> {
        let raw_sets: Vec<_> = sets.iter().map(|s| s.raw).collect();
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(push_stages)
            .size(push_bytes)];
        let mut info = vk::PipelineLayoutCreateInfo::default().set_layouts(&raw_sets);
        if push_bytes > 0 {
            info = info.push_constant_ranges(&ranges);
        }
        // SAFETY: valid device and set layouts.
        let raw = unsafe { gpu.device().create_pipeline_layout(&info, None)? };
        Ok(Self {
            gpu: gpu.clone(),
            raw,
            push_stages,
        })
    }
}

impl Drop for PipelineLayout {
    fn drop(&mut self) {
        // SAFETY: pipelines made with the layout hold what they need of it.
        unsafe { self.gpu.device().destroy_pipeline_layout(self.raw, None) };
    }
}

/// A shader module for the length of one pipeline creation.
struct Module<'g> {
    gpu: &'g Gpu,
    raw: vk::ShaderModule,
}

impl<'g> Module<'g> {
    fn new(gpu: &'g Gpu, shader: &Shader) -> Result<Self> {
        let code = shader.words()?;
        // SAFETY: SPIR-V produced by shaderc at build time.
        let raw = unsafe {
            gpu.device()
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&code), None)?
        };
        Ok(Self { gpu, raw })
    }
}

impl Drop for Module<'_> {
    fn drop(&mut self) {
        // SAFETY: pipelines hold what they need of the module once created.
        unsafe { self.gpu.device().destroy_shader_module(self.raw, None) };
    }
}

/// What a graphics pipeline draws: triangle lists, no vertex input (vertex shaders compute
/// positions from indices), colour targets (written whole, no blending) and optionally a depth
/// target, dynamic viewport and scissor.
pub struct GraphicsDesc<'a> {
    pub name: &'a str,
    pub vertex: &'a Shader,
    pub fragment: &'a Shader,
    /// One format per colour target, in location order.
    pub color_formats: &'a [vk::Format],
    /// The depth target's format and the test (and write) comparison; None: no depth target.
    pub depth: Option<(vk::Format, vk::CompareOp)>,
    pub polygon_mode: vk::PolygonMode,
    /// Some(front): triangles wound `front` on screen face the eye and the others are culled;
    /// None: none is culled.
    pub cull: Option<vk::FrontFace>,
}

/// A graphics pipeline for dynamic rendering.
pub struct GraphicsPipeline {
    gpu: Arc<Gpu>,
    pub(crate) raw: vk::Pipeline,
}

impl GraphicsPipeline {
    pub fn new(gpu: &Arc<Gpu>, layout: &PipelineLayout, d: &GraphicsDesc<'_>) -> Result<Self> {
        let vert = Module::new(gpu, d.vertex)?;
        let frag = Module::new(gpu, d.fragment)?;
        let stages = [
            vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::VERTEX)
                .module(vert.raw)
                .name(c"main"),
            vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::FRAGMENT)
                .module(frag.raw)
                .name(c"main"),
        ];
        let vertex_input = vk::PipelineVertexInputStateCreateInfo::default();
        let assembly = vk::PipelineInputAssemblyStateCreateInfo::default()
            .topology(vk::PrimitiveTopology::TRIANGLE_LIST);
        let viewport = vk::PipelineViewportStateCreateInfo::default()
            .viewport_count(1)
            .scissor_count(1);
        let raster = vk::PipelineRasterizationStateCreateInfo::default()
            .polygon_mode(d.polygon_mode)
            .cull_mode(match d.cull {
                Some(_) => vk::CullModeFlags::BACK,
                None => vk::CullModeFlags::NONE,
            })
            .front_face(d.cull.unwrap_or(vk::FrontFace::COUNTER_CLOCKWISE))
            .line_width(1.0);
        let multisample = vk::PipelineMultisampleStateCreateInfo::default()
            .rasterization_samples(vk::SampleCountFlags::TYPE_1);
        let depth = match d.depth {
            Some((_, compare)) => vk::PipelineDepthStencilStateCreateInfo::default()
                .depth_test_enable(true)
                .depth_write_enable(true)
                .depth_compare_op(compare),
            None => vk::PipelineDepthStencilStateCreateInfo::default(),
        };
        let attachments: Vec<_> = d
            .color_formats
            .iter()
            .map(|_| {
                vk::PipelineColorBlendAttachmentState::default()
                    .color_write_mask(vk::ColorComponentFlags::RGBA)
            })
            .collect();
        let blend = vk::PipelineColorBlendStateCreateInfo::default().attachments(&attachments);
        let dynamic_states = [vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
        let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic_states);
        let mut rendering = vk::PipelineRenderingCreateInfo::default()
            .color_attachment_formats(d.color_formats)
            .depth_attachment_format(d.depth.map_or(vk::Format::UNDEFINED, |(f, _)| f));
        let info = vk::GraphicsPipelineCreateInfo::default()
            .stages(&stages)
            .vertex_input_state(&vertex_input)
            .input_assembly_state(&assembly)
            .viewport_state(&viewport)
            .rasterization_state(&raster)
            .multisample_state(&multisample)
            .depth_stencil_state(&depth)
            .color_blend_state(&blend)
            .dynamic_state(&dynamic)
            .layout(layout.raw)
            .push_next(&mut rendering);
        let _compile = crate::profile::scope("gpu: graphics pipeline made");
        // SAFETY: every pointer in `info` outlives the call.
        let raw = unsafe {
            gpu.device()
                .create_graphics_pipelines(vk::PipelineCache::null(), &[info], None)
        }
        .map_err(|(_, e)| GpuError::from(e))?[0];
        gpu.set_name(raw, d.name);
        Ok(Self {
            gpu: gpu.clone(),
            raw,
        })
    }
}

impl Drop for GraphicsPipeline {
    fn drop(&mut self) {
        // Destroyed once no detached submission that may use it is pending.
        self.gpu.release(Garbage::Pipeline(self.raw));
    }
}

/// A compute pipeline over a [`PipelineLayout`]: what [`super::ComputeKernel`] is built on, and
/// what kernels use directly whose sets it cannot describe (arrays, dynamic offsets).
pub struct ComputePipeline {
    gpu: Arc<Gpu>,
    name: String,
    /// The handle, once made; a failed compile's error.
    raw: OnceLock<Result<vk::Pipeline, Arc<GpuError>>>,
    /// The compile on a thread of its own ([`Self::compiling`]), until waited for.
    job: Mutex<Option<JoinHandle<Result<vk::Pipeline>>>>,
}

impl ComputePipeline {
    pub fn new(
        gpu: &Arc<Gpu>,
        name: &str,
        layout: &PipelineLayout,
        shader: &Shader,
    ) -> Result<Self> {
        Self::specialized(gpu, name, layout, shader, &[])
    }

    /// Like [`Self::new`] with specialization constants `spec[i]` at `constant_id = i`.
    pub fn specialized(
        gpu: &Arc<Gpu>,
        name: &str,
        layout: &PipelineLayout,
        shader: &Shader,
        spec: &[i32],
    ) -> Result<Self> {
        let raw = compile(gpu, name, layout.raw, shader, spec)?;
        Ok(Self {
            gpu: gpu.clone(),
            name: name.to_string(),
            raw: OnceLock::from(Ok(raw)),
            job: Mutex::new(None),
        })
    }

    /// Like [`Self::specialized`], compiled on a thread of its own: this returns at once, and
    /// the first use ([`Self::raw`]) waits for the compile. For pipelines the driver takes long
    /// to compile where nothing needs them yet (the shading pass: 0.9 s on an H200 with no
    /// driver cache, docs/PERF.md), so that the work before their first use overlaps it.
    /// `layout` must outlive the pipeline (the kernel that owns both drops this first).
    pub(super) fn compiling(
        gpu: &Arc<Gpu>,
        name: &str,
        layout: &PipelineLayout,
        shader: &Shader,
        spec: &[i32],
    ) -> Result<Self> {
        let job = {
            let (gpu, name, layout, shader, spec) = (
                gpu.clone(),
                name.to_string(),
                layout.raw,
                *shader,
                spec.to_vec(),
            );
            std::thread::Builder::new()
                .name("pipeline compile".into())
                .spawn(move || compile(&gpu, &name, layout, &shader, &spec))
        };
        let Ok(job) = job else {
            // No thread to spare: compiled here, as `specialized` does.
            return Self::specialized(gpu, name, layout, shader, spec);
        };
        Ok(Self {
            gpu: gpu.clone(),
            name: name.to_string(),
            raw: OnceLock::new(),
            job: Mutex::new(Some(job)),
        })
    }

    /// The pipeline's handle, waiting for its compile where it runs on a thread of its own; a
    /// failed compile's error, naming the pipeline.
    pub(crate) fn raw(&self) -> Result<vk::Pipeline> {
        let raw = self.raw.get_or_init(|| {
            let _wait = crate::profile::scope("gpu: waited for a pipeline's compile");
            let job = self.job.lock().map(|mut j| j.take()).ok().flatten();
            match job.map(JoinHandle::join) {
                Some(Ok(made)) => made.map_err(Arc::new),
                Some(Err(_)) => Err(Arc::new(GpuError::usage("its compile panicked"))),
                None => Err(Arc::new(GpuError::usage("its compile was lost"))),
            }
        });
        raw.clone().map_err(|source| GpuError::Pipeline {
            name: self.name.clone(),
            source,
        })
    }
}

/// Makes the compute pipeline `name` of `shader` over `layout` with specialization constants
/// `spec[i]` at `constant_id = i`, on the calling thread.
fn compile(
    gpu: &Gpu,
    name: &str,
    layout: vk::PipelineLayout,
    shader: &Shader,
    spec: &[i32],
) -> Result<vk::Pipeline> {
    let module = Module::new(gpu, shader)?;
    let entries: Vec<_> = (0..spec.len())
        .map(|i| vk::SpecializationMapEntry {
            constant_id: i as u32,
            offset: (i * 4) as u32,
            size: 4,
        })
        .collect();
    let spec_info = vk::SpecializationInfo::default()
        .map_entries(&entries)
        .data(bytemuck::cast_slice(spec));
    let stage = vk::PipelineShaderStageCreateInfo::default()
        .stage(vk::ShaderStageFlags::COMPUTE)
        .module(module.raw)
        .name(c"main")
        .specialization_info(&spec_info);
    let _compile = crate::profile::scope("gpu: compute pipeline made");
    // SAFETY: module and layout are valid for the call.
    let raw = unsafe {
        gpu.device().create_compute_pipelines(
            vk::PipelineCache::null(),
            &[vk::ComputePipelineCreateInfo::default()
                .stage(stage)
                .layout(layout)],
            None,
        )
    }
    .map_err(|(_, e)| GpuError::from(e))?[0];
    gpu.set_name(raw, name);
    Ok(raw)
}

impl Drop for ComputePipeline {
    fn drop(&mut self) {
        // A compile still running is waited for (its layout outlives it); the pipeline is
        // destroyed once no detached submission that may use it is pending.
        if let Ok(raw) = self.raw() {
            self.gpu.release(Garbage::Pipeline(raw));
        }
    }
}

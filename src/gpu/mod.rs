//! The Vulkan layer. It knows nothing about terrain: a context ([`Gpu`]), named buffers and
//! images, access-type barriers, typed compute kernels, graphics and compute pipelines over
//! descriptor layouts of any kind ([`graphics`]), command recording with fenced submission,
//! detached submissions for frames in flight with deferred release of what they use
//! ([`retire`]), timestamp timing and the validation messenger.

pub mod barrier;
pub mod buffer;
pub mod capture;
pub mod command;
pub mod context;
pub mod debug;
pub mod error;
pub mod flights;
pub mod graphics;
pub mod image;
pub mod pipeline;
pub mod retire;
pub mod shaders;
pub mod timestamps;

pub use ash::vk;
pub use barrier::Access;
pub use buffer::{Buffer, BufferDesc};
pub use capture::Capture;
pub use command::{InFlight, Pass, Recorder};
pub use context::{list_devices, DeviceInfo, DeviceSummary, Gpu, GpuOptions};
pub use error::{GpuError, Result};
pub use flights::{Finished, Submitter};
pub use gpu_allocator::MemoryLocation;
pub use graphics::{
    Bound, ComputePipeline, DescriptorKind, GraphicsDesc, GraphicsPipeline, LayoutBinding,
    PipelineLayout, SetHandle, SetLayout, SetPool,
};
pub use image::{Image, ImageDesc};
pub use pipeline::{BindingKind, ComputeKernel, DescriptorSet, Resource};
pub use retire::Ticket;
pub use shaders::Shader;
pub use timestamps::{start_trace, start_trace_measured, GpuTimer, PassTime};

//! Errors of the Vulkan layer. Everything a driver or the user's machine can make fail comes back
//! as a [`GpuError`]; nothing in `gpu/` panics on driver input.

use ash::vk;

/// An error from the GPU layer.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error("the Vulkan loader could not be loaded ({0}); install libvulkan1 and a driver (e.g. mesa-vulkan-drivers)")]
    Loader(#[from] ash::LoadingError),
    #[error("Vulkan call failed: {0}")]
    Vulkan(vk::Result),
    /// The device or the host ran out of memory for a Vulkan object.
    #[error("out of GPU memory ({0})")]
    OutOfMemory(vk::Result),
    /// The device was lost (a hang, a reset, a removed GPU): nothing on it can be used again.
    #[error("the GPU was lost (device lost): its work and memory are gone")]
    DeviceLost,
    /// A submission did not finish in time (a hang, or far too much work in one submission).
    #[error("the GPU did not finish within {seconds} s")]
    Timeout { seconds: u64 },
    /// The device lacks something this work needs (a format, a feature, a presentable surface).
    #[error("{0}")]
    Unsupported(String),
    #[error("GPU memory allocation failed: {0}")]
    Allocation(#[from] gpu_allocator::AllocationError),
    #[error("no usable Vulkan device: {0}")]
    NoDevice(String),
    #[error("validation requested but VK_LAYER_KHRONOS_validation is not installed (Debian: vulkan-validationlayers)")]
    NoValidationLayer,
    /// A pipeline compiled on a thread of its own failed (`ComputePipeline::compiling`).
    #[error("pipeline {name}: {source}")]
    Pipeline {
        name: String,
        #[source]
        source: std::sync::Arc<GpuError>,
    },
    /// The GPU layer was called wrongly (a binding that does not match, a buffer not mapped):
    /// a bug in the caller.
    #[error("{0}")]
    Usage(String),
}

impl GpuError {
    pub(crate) fn usage(msg: impl Into<String>) -> Self {
        Self::Usage(msg.into())
    }
}

impl From<vk::Result> for GpuError {
    fn from(r: vk::Result) -> Self {
        match r {
            vk::Result::ERROR_OUT_OF_DEVICE_MEMORY | vk::Result::ERROR_OUT_OF_HOST_MEMORY => {
                Self::OutOfMemory(r)
            }
            vk::Result::ERROR_DEVICE_LOST => Self::DeviceLost,
            r => Self::Vulkan(r),
        }
    }
}

/// Result of the GPU layer.
pub type Result<T, E = GpuError> = std::result::Result<T, E>;

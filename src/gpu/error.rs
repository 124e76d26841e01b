//! Errors of the Vulkan layer. Everything a driver or the user's machine can make fail comes back
//! as a [`GpuError`]; nothing in `gpu/` panics on driver input.

use ash::vk;

/// An error from the GPU layer.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error("the Vulkan loader could not be loaded ({0}); install libvulkan1 and a driver (e.g. mesa-vulkan-drivers)")]
    Loader(#[from] ash::LoadingError),
    #[error("Vulkan call failed: {0}")]
    Vulkan(#[from] vk::Result),
    #[error("GPU memory allocation failed: {0}")]
    Allocation(#[from] gpu_allocator::AllocationError),
    #[error("no usable Vulkan device: {0}")]
    NoDevice(String),
    #[error("validation requested but VK_LAYER_KHRONOS_validation is not installed (Debian: vulkan-validationlayers)")]
    NoValidationLayer,
    #[error("{0}")]
    Usage(String),
}

impl GpuError {
    pub(crate) fn usage(msg: impl Into<String>) -> Self {
        Self::Usage(msg.into())
    }
}

/// Result of the GPU layer.
pub type Result<T, E = GpuError> = std::result::Result<T, E>;

//! Errors of the brush engine.

use crate::gpu::GpuError;
use crate::noise::NoiseError;
use crate::pages::PageError;

/// Why a brush operation failed.
#[derive(Debug, thiserror::Error)]
pub enum BrushError {
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error(transparent)]
    Pages(#[from] PageError),
    #[error(transparent)]
    Noise(#[from] NoiseError),
    #[error("batch must be between 1 and {max}, got {batch}")]
    Batch { batch: usize, max: usize },
    #[error("the document has no field {0:?} to paint")]
    NoField(String),
    /// A layer step or a stroke the layers refuse (locked, unknown, bad value), said in full.
    #[error("{0}")]
    Layer(String),
}

pub type Result<T, E = BrushError> = std::result::Result<T, E>;

//! Errors of the page store.

use crate::gpu::GpuError;

/// Why the page store could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// The document description is invalid (size, page size, range).
    #[error("{0}")]
    Document(String),
    #[error("{device} cannot store r16 pages (no R16_UNORM storage images)")]
    NoR16Storage { device: String },
    #[error("initial heights do not match the document size")]
    WrongSize,
    #[error("page {x},{y} does not fit the document")]
    PageOutside { x: u32, y: u32 },
    #[error("field {0:?} must have the document's size and page size")]
    FieldGrid(String),
    #[error("the document has a field {0:?} already")]
    FieldExists(String),
    #[error("the document has no field {0:?}")]
    NoField(String),
    #[error(
        "the GPU page budget of {} is too small: one wave needs {} of pages (raise --gpu-budget)",
        mib(*budget), mib(*needed)
    )]
    BudgetTooSmall { needed: u64, budget: u64 },
    #[error("page {x},{y} is not on the GPU (internal error: it was not brought there first)")]
    NotResident { x: u32, y: u32 },
    #[error("{}: {problem}", path.display())]
    Disk {
        path: std::path::PathBuf,
        problem: String,
    },
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

pub type Result<T, E = PageError> = std::result::Result<T, E>;

//! Geology (docs/geology.md): stream-power erosion with uplift (after Braun & Willett 2013,
//! Cordonnier et al. 2016 and Schott et al. 2023) — rivers cut into rock as it rises, carving
//! drainage networks at the scale of a range. On the GPU (`shaders-glsl/geology/`) with a CPU
//! twin ([`cpu`]), in metres and years.
//!
//! * [`params`]: the model's parameters, their defaults and checks.
//! * [`shared`]: the kernels' push constants.
//! * [`cpu`]: the twin, one Jacobi iteration texel by texel (D8 or multi-flow area), and the
//!   exact D8 accumulation.
//! * [`fill`]: depression filling before the first iteration (priority-flood with an ε step).
//! * [`gpu`]: a region's state in storage buffers and the two kernels that iterate it.
//! * [`run`]: a whole run over a height grid, coarse to fine, either backend.
//! * [`stats`]: the drainage statistics that say whether a landscape is drained.

pub mod cpu;
pub mod fill;
pub mod gpu;
pub mod params;
pub mod run;
pub mod shared;
pub mod stats;

pub use params::GeologyParams;

/// The page-store field of a document's uplift map u (docs/geology.md): how fast the rock rises,
/// times the uplift rate; 1 where never painted. Made when first selected for painting, saved
/// in the project beside the base.
pub const UPLIFT_FIELD: &str = "uplift";

/// The value of the uplift map where it was never painted.
pub const UPLIFT_UNPAINTED: f32 = 1.0;

//! Erosion (docs/erosion.md): hydraulic erosion by the virtual-pipe model (Mei, Decaudin & Hu
//! 2007, with Št'ava et al.'s depth limit and flux-form sediment transport) and thermal erosion,
//! on the GPU (`shaders-glsl/erosion/`) with a CPU twin ([`cpu`]).
//!
//! * [`params`]: the model's parameters, their defaults and checks; [`Model`].
//! * [`shared`]: the kernels' push constants.
//! * [`gpu`]: a region's state in storage buffers and the kernels that step it.
//! * [`cpu`]: the twin, the same passes texel by texel.
//! * [`run`]: a whole run on a height grid (heights in, eroded heights out), either backend.
//! * [`brush`]: one erosion-brush instance over its square.

pub mod brush;
pub mod cpu;
pub mod gpu;
pub mod params;
pub mod run;
pub mod shared;

pub use params::{ErosionBrush, ErosionParams, Model, RunFields, PRESETS};

//! Scarp: procedural heightfield brushes on Vulkan compute (de Carpentier & Bidarra 2009).
//!
//! * [`gpu`]: the Vulkan layer, reusable outside Scarp.
//! * [`noise`]: noise tables and the CPU twins of every GLSL noise function, plus GPU generation.

pub mod bench;
pub mod brush;
pub mod editor;
pub mod gallery;
pub mod gpu;
pub mod noise;
pub mod pages;
pub mod profile;
pub mod render;
pub mod session;
pub mod shared_constants;
pub mod terrain;

//! Noise structs that cross the CPU/GPU line, `#[repr(C)]` + `Pod`, mirrored field for field in
//! `shaders-glsl/include/shared.glsl`. Every field is 4 bytes, so std430 and `repr(C)` agree with
//! no padding; tests/shared_layout.rs checks every field's offset on the GPU.

use bytemuck::{Pod, Zeroable};

/// Parameters of every noise function (see `shared.glsl` for the meaning of each field).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct NoiseParams {
    pub offset: [f32; 2],
    pub scale: f32,
    pub seed: i32,
    pub octaves: i32,
    pub lacunarity: f32,
    pub gain: f32,
    pub warp: f32,
    pub gain1: f32,
    pub warp0: f32,
    pub damp0: f32,
    pub damp: f32,
    pub damp_scale: f32,
    pub alpha: f32,
    pub beta: f32,
    pub prewarp_amount: f32,
    pub prewarp_scale: f32,
    pub prewarp_octaves: i32,
    pub power: f32,
    pub kind: i32,
}

/// Which rows of a W x H grid one dispatch covers.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct NoiseGrid {
    pub width: u32,
    pub rows: u32,
    pub row_offset: u32,
    pub _pad: u32,
}

/// Push constants of `noise/generate.comp` and `test/echo_noise.comp`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct NoiseGenPush {
    pub noise: NoiseParams,
    pub grid: NoiseGrid,
}

const _: () = assert!(std::mem::size_of::<NoiseParams>() == 80);
const _: () = assert!(std::mem::size_of::<NoiseGenPush>() == 96);
// std430 aligns vec2 (and structs holding one) to 8 bytes; repr(C) aligns [f32; 2] to 4. Every
// such field must already sit on an 8-byte offset, or GLSL and Rust disagree on the layout.
const _: () = assert!(std::mem::offset_of!(NoiseGenPush, grid) % 8 == 0);

//! Brush structs that cross the CPU/GPU line, `#[repr(C)]` + `Pod`, mirrored field for field in
//! `shaders-glsl/include/shared.glsl`. Every field is 4 bytes, so std430 and `repr(C)` agree with
//! no padding; tests/shared_layout.rs checks every field's offset on the GPU.

use crate::noise::shared::NoiseParams;
use bytemuck::{Pod, Zeroable};

/// One brush instance in document texels; `strength` is brush strength x pressure, signed.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct BrushInstance {
    pub center: [f32; 2],
    pub radius: f32,
    pub inner_radius: f32,
    pub strength: f32,
    /// Local stroke direction in radians.
    pub direction: f32,
    /// Directional brushes: unit compression axis, (cos, sin) of direction + angle. Computed on
    /// the CPU so both twins use identical values (GPU sin/cos are approximate).
    pub axis: [f32; 2],
}

/// Push constants of one batched brush pass over one page.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct BrushPass {
    pub page_origin: [i32; 2],
    /// Page-local x | y << 16.
    pub rect_min_packed: u32,
    /// Width | height << 16.
    pub rect_size_packed: u32,
    pub first_instance: u32,
    pub instance_count: u32,
    pub falloff: i32,
    /// Level brushes: height under the stroke's first sample, before the stroke; terrace
    /// brushes: the sharpness.
    pub level_target: f32,
    pub noise: NoiseParams,
    /// Directional brushes: compression ratio; stamp brushes: stamp side / brush diameter;
    /// terrace brushes: the step height.
    pub brush_param: f32,
    /// r16 pages: the document's height range.
    pub height_min: f32,
    pub height_range: f32,
    /// Exponent of the power falloff (last: `noise` must stay 8-byte aligned, as in std430).
    pub falloff_power: f32,
}

/// Push constants of one smooth/contrast pass (see shared.glsl): instances
/// `[first_instance, first_instance + instance_count)` of the stroke's instance buffer, in order,
/// over one page (at most [`crate::shared_constants::SMOOTH_MAX_BATCH`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct SmoothPass {
    pub first_instance: u32,
    pub instance_count: u32,
    pub page_origin: [i32; 2],
    pub self_size: [i32; 2],
    pub doc_size: [i32; 2],
    pub rect_min: [i32; 2],
    pub rect_size: [i32; 2],
    pub page_size: i32,
    pub falloff: i32,
    pub falloff_power: f32,
    pub flat_height: f32,
    pub present_mask: u32,
    /// r16 pages: the document's height range.
    pub height_min: f32,
    pub height_range: f32,
}

/// Push constants of the path kernel (src/brush/path.rs), mirrored in
/// `shaders-glsl/include/path_shared.glsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct PathPush {
    /// Document texel of the rect's first texel.
    pub rect_origin: [i32; 2],
    pub rect_size: [u32; 2],
    /// Tiles per row of the rect.
    pub tiles_x: u32,
    pub half_width: f32,
    pub falloff: f32,
    /// Depth, negative below the base (carve, grade), positive above (raise).
    pub signed_depth: f32,
    /// `PathMode as u32`: 0 carve, 1 raise, 2 grade.
    pub mode: u32,
    /// `Profile as u32`: 0 flat, 1 U, 2 V.
    pub profile: u32,
    pub _pad: [u32; 2],
}

/// One segment of a path's curve: its ends (document texels) and the base heights there.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct PathSegment {
    pub a: [f32; 2],
    pub b: [f32; 2],
    pub base_a: f32,
    pub base_b: f32,
    pub _pad: [f32; 2],
}

const _: () = assert!(std::mem::size_of::<PathPush>() == 48);
const _: () = assert!(std::mem::size_of::<PathSegment>() == 32);
const _: () = assert!(std::mem::offset_of!(PathPush, rect_size) % 8 == 0);
const _: () = assert!(std::mem::offset_of!(PathSegment, b) % 8 == 0);
const _: () = assert!(std::mem::size_of::<SmoothPass>() == 76);
const _: () = assert!(std::mem::size_of::<BrushInstance>() == 32);
const _: () = assert!(std::mem::size_of::<BrushPass>() == 128);
// std430 aligns vec2 (and structs holding one) to 8 bytes; repr(C) aligns [f32; 2] to 4. Every
// such field must already sit on an 8-byte offset, or GLSL and Rust disagree on the layout.
const _: () = assert!(std::mem::offset_of!(BrushPass, page_origin) % 8 == 0);
const _: () = assert!(std::mem::offset_of!(BrushPass, noise) % 8 == 0);
const _: () = assert!(std::mem::offset_of!(BrushInstance, center) % 8 == 0);
const _: () = assert!(std::mem::offset_of!(BrushInstance, axis) % 8 == 0);
const _: () = assert!(std::mem::offset_of!(SmoothPass, page_origin) % 8 == 0);
const _: () = assert!(std::mem::offset_of!(SmoothPass, self_size) % 8 == 0);
const _: () = assert!(std::mem::offset_of!(SmoothPass, doc_size) % 8 == 0);
const _: () = assert!(std::mem::offset_of!(SmoothPass, rect_min) % 8 == 0);
const _: () = assert!(std::mem::offset_of!(SmoothPass, rect_size) % 8 == 0);

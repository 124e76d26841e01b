//! Layer structs that cross the CPU/GPU line, `#[repr(C)]` + `Pod`, mirrored field for field in
//! `shaders-glsl/include/layers_shared.glsl`; tests/shared_layout.rs checks every offset.

use bytemuck::{Pod, Zeroable};

/// Push constants of `layers/load.comp` and `store.comp` (include/fold_body.glsl).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct FoldPush {
    pub size: [i32; 2],
    /// Height where the source has no page.
    pub flat_height: f32,
    /// 1: the source has a page.
    pub present: u32,
    pub height_min: f32,
    pub height_range: f32,
}

/// Layers one blend pass folds.
pub const BLEND_LAYERS: usize = 4;

/// Push constants of `layers/blend.comp`: up to [`BLEND_LAYERS`] layers folded in one pass.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct BlendPush {
    pub size: [i32; 2],
    pub count: i32,
    /// Bit 3i + part: that field of layer i has a page.
    pub present: u32,
    /// `LAYER_*` of layer i in bits 2i..2i+1.
    pub modes: u32,
    /// Height where the source has no page (passes that read the source; bit 12 of `present`).
    pub flat_height: f32,
    pub pad: [u32; 2],
    pub weights: [f32; 4],
    pub flat_value: [f32; 4],
    pub flat_alpha: [f32; 4],
    pub flat_mask: [f32; 4],
}

/// Push constants of `layers/mask_rules.comp`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct RulesPush {
    pub origin: [i32; 2],
    pub size: [i32; 2],
    pub doc: [i32; 2],
    pub side: i32,
    pub present: u32,
    pub flat_height: f32,
    pub rules: u32,
    pub pad: [u32; 2],
    pub height_band: [f32; 4],
    pub slope_band: [f32; 4],
    pub curvature_band: [f32; 4],
}

const _: () = assert!(std::mem::size_of::<FoldPush>() == 24);
const _: () = assert!(std::mem::size_of::<BlendPush>() == 96);
const _: () = assert!(std::mem::size_of::<RulesPush>() == 96);
// std430 aligns vec4 to 16 bytes and ivec2 to 8; repr(C) aligns arrays to 4.
const _: () = assert!(std::mem::offset_of!(BlendPush, weights) % 16 == 0);
const _: () = assert!(std::mem::offset_of!(RulesPush, height_band) % 16 == 0);
const _: () = assert!(std::mem::offset_of!(RulesPush, doc) % 8 == 0);

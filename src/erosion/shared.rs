//! The erosion kernels' push constants, `#[repr(C)]` + `Pod`, mirrored field for field in
//! `shaders-glsl/include/erosion_shared.glsl`; tests/shared_layout.rs checks every offset. The
//! CPU twin reads the same struct, so both sides use the same constants (tan of the talus angle
//! included).

use bytemuck::{Pod, Zeroable};

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct ErosionPush {
    /// Width and height of the simulated region.
    pub size: [i32; 2],
    pub dt: f32,
    pub rain: f32,
    pub pipe_area: f32,
    pub gravity: f32,
    pub capacity: f32,
    pub dissolve: f32,
    pub deposit: f32,
    pub evaporation: f32,
    pub min_tilt: f32,
    pub erosion_depth: f32,
    /// tan(talus angle).
    pub talus_tan: f32,
    pub thermal_rate: f32,
    /// Brush runs: rain and shedding weighted by the falloff around `center` (region-local
    /// texels) when `radius` > 0; region runs: q = 1.
    pub center: [f32; 2],
    pub radius: f32,
    pub inner_radius: f32,
    /// `FALLOFF_*`.
    pub falloff: i32,
    pub falloff_power: f32,
    /// Brush instances on the GPU: texels per height unit (heights in, `b = h·scale`) and the
    /// instance's strength × pressure (the blend back); unused elsewhere.
    pub height_scale: f32,
    pub strength: f32,
    /// Brush instances on the GPU: metres per height unit, for the wear and deposits the blend
    /// adds ([`crate::wear`]); unused elsewhere.
    pub height_unit: f32,
    pub _pad: f32,
}

const _: () = assert!(std::mem::size_of::<ErosionPush>() == 96);
const _: () = assert!(std::mem::offset_of!(ErosionPush, center) % 8 == 0);

//! The geology kernels' push constants, `#[repr(C)]` + `Pod`, mirrored field for field in
//! `shaders-glsl/include/geology_shared.glsl`; tests/shared_layout.rs checks every offset. The
//! CPU twin reads the same struct, so both sides compute with the same constants (the diagonal
//! distance and τ² included).

use bytemuck::{Pod, Zeroable};

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GeologyPush {
    /// Width and height of the region R.
    pub size: [i32; 2],
    /// Texel size τ (m), the diagonal distance τ·√2 (m), τ² and the texel area a0 (m²).
    pub tau: f32,
    pub diag: f32,
    pub tau2: f32,
    pub a0: f32,
    /// K, m, n, κ (m²/yr), Δt (yr) and U (m/yr).
    pub erodibility: f32,
    pub m: f32,
    pub n: f32,
    pub diffusion: f32,
    pub dt: f32,
    pub uplift: f32,
    /// Heights z ≤ `base_level` (m, as z) are outlets when `has_base` is 1.
    pub base_level: f32,
    pub has_base: i32,
    /// 1: this iteration also folds `max |z' − z| / steady_unit` over non-outlets into the
    /// statistics buffer.
    pub measure: i32,
    /// Δt·U (or Δt where U is 0): the unit of the steady-state measure.
    pub steady_unit: f32,
    /// 1: the uplift map is 1 everywhere and the GPU's update does not read it (the same
    /// arithmetic: `Δt·U·1` is `Δt·U`). Set by the GPU state from its map; the twin ignores it.
    pub uniform_uplift: i32,
    /// 1/τ and 1/(τ·√2), rounded once here: slopes are drops times these on both sides. A GPU's
    /// division may differ from the CPU's in the last bit (Vulkan allows 2.5 ULP), a
    /// multiplication may not, so the GPU and the twin pick the same receivers.
    pub inv_tau: f32,
    pub inv_diag: f32,
    /// 1: the drainage area is routed to every lower neighbour, weighted by its slope to the
    /// power `flow_exponent` (multi-flow); 0: all of it to the receiver (D8).
    pub multi_flow: i32,
    pub flow_exponent: f32,
    /// 1: the threshold hillslope — after uplift a texel is lowered to at most its lowest
    /// `z_q + rise` over its neighbours, `rise_axis` (tan θ·τ) for the axis neighbours and
    /// `rise_diag` (tan θ·τ√2) for the diagonal ones; 0: no threshold (the model).
    pub critical: i32,
    pub rise_axis: f32,
    pub rise_diag: f32,
    /// 1: this iteration solves each texel's steady-state equation for its height (a Jacobi
    /// sweep of the stationary model, `--solve-steady`) instead of stepping Δt; 0: the model's
    /// time step. Steps 1 and 2 are the same either way.
    pub stationary: i32,
    /// How far a stationary iteration moves a texel toward its solved height: z + ω·(z_s − z)
    /// (damped Jacobi; undamped sweeps can fall into cycles where receivers flip).
    pub relaxation: f32,
}

const _: () = assert!(std::mem::size_of::<GeologyPush>() == 104);

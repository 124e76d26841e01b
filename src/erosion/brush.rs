//! One erosion-brush instance (docs/erosion.md): the square of half-side ⌈1.25·radius⌉ around
//! its centre, clipped to the document, runs the brush's steps with rain and shedding weighted
//! by the falloff; sediment settles and water drops; then `h ← h + s·(h_eroded − h)` over the
//! square, `s` the instance's strength × pressure. The same code serves the document (GPU) and
//! the CPU twin; only the backend differs.

use super::cpu::State;
use super::gpu::{GpuErosion, Kernels};
use super::params::ErosionBrush;
use crate::falloff::Falloff;
use crate::gpu::{Gpu, Result};
use crate::pages::geometry::Region;
use std::sync::Arc;

/// One instance: where, how large, how strong (strength × pressure) and its falloff.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Instance {
    pub center: [f32; 2],
    pub radius: f32,
    pub inner_radius: f32,
    pub strength: f32,
    pub falloff: Falloff,
    pub falloff_power: f32,
}

impl Default for Instance {
    fn default() -> Self {
        Self {
            center: [0.0; 2],
            radius: 1.0,
            inner_radius: 0.0,
            strength: 1.0,
            falloff: Falloff::Parabolic,
            falloff_power: 2.0,
        }
    }
}

/// The square an instance simulates in a `width` x `height` document (None when it lies
/// outside).
pub fn square(width: u32, height: u32, b: &Instance) -> Option<Region> {
    let half = (1.25 * b.radius).ceil() as i64;
    let (cx, cy) = (b.center[0].round() as i64, b.center[1].round() as i64);
    let x0 = (cx - half).max(0);
    let y0 = (cy - half).max(0);
    let x1 = (cx + half + 1).min(i64::from(width));
    let y1 = (cy + half + 1).min(i64::from(height));
    (x1 > x0 && y1 > y0).then(|| Region {
        x: x0 as u32,
        y: y0 as u32,
        width: (x1 - x0) as u32,
        height: (y1 - y0) as u32,
    })
}

/// Where an instance's steps run.
pub enum Backend<'a> {
    /// The GPU, in these buffers (their capacity at least the square's texels).
    Gpu(&'a mut GpuErosion),
    /// The CPU twin.
    Cpu,
}

/// Buffers for the squares of `brush`'s instances in a `width` x `height` document, reusing
/// `held` when they are large enough.
pub fn buffers_for(
    gpu: &Arc<Gpu>,
    held: Option<GpuErosion>,
    kernels: &Arc<Kernels>,
    width: u32,
    height: u32,
    radius: f32,
) -> Result<GpuErosion> {
    let side = 2 * (1.25 * radius).ceil() as u64 + 1;
    let need = side.min(u64::from(width)) * side.min(u64::from(height));
    match held {
        Some(g) if g.capacity() >= need => Ok(g),
        _ => GpuErosion::with_capacity(gpu, kernels, need),
    }
}

/// The push constants of instance `b` of `e` over `square` (region-local centre, falloff,
/// strength), with `height_scale` texels per height unit unless `e` gives one.
pub fn instance_push(
    square: Region,
    b: &Instance,
    e: &ErosionBrush,
    height_scale: f32,
) -> super::shared::ErosionPush {
    let mut push = e.params.push([square.width, square.height]);
    push.center = [b.center[0] - square.x as f32, b.center[1] - square.y as f32];
    push.radius = b.radius;
    push.inner_radius = b.inner_radius;
    push.falloff = b.falloff.index();
    push.falloff_power = b.falloff_power;
    push.height_scale = e.height_scale.unwrap_or(height_scale);
    push.strength = b.strength;
    push
}

/// Erodes `heights`, the values of `square` (row-major), for instance `b` simulating `e`, with
/// `height_scale` texels per height unit (unless `e` gives one).
pub fn erode_square(
    backend: Backend,
    heights: &mut [f32],
    square: Region,
    b: &Instance,
    e: &ErosionBrush,
    height_scale: f32,
) -> Result<()> {
    let push = instance_push(square, b, e, height_scale);
    let scale = push.height_scale;
    let size = [square.width, square.height];
    let start: Vec<f32> = heights.iter().map(|h| h * scale).collect();
    let settled = match backend {
        Backend::Gpu(g) => {
            let p = crate::profile::scope("erosion brush: load");
            g.load(size, &start)?;
            drop(p);
            let p = crate::profile::scope("erosion brush: steps");
            g.run(&push, e.model, e.steps as usize, None, |_| {})?;
            drop(p);
            let _p = crate::profile::scope("erosion brush: read back");
            g.settled()?
        }
        Backend::Cpu => {
            let mut st = State::new(size[0] as usize, size[1] as usize, start);
            for _ in 0..e.steps {
                st.step(&push, e.model);
            }
            st.settle();
            st.b
        }
    };
    for (h, b_end) in heights.iter_mut().zip(&settled) {
        let eroded = b_end / scale;
        *h += b.strength * (eroded - *h);
    }
    Ok(())
}

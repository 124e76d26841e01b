//! One erosion-brush instance (docs/erosion.md): the square of half-side ⌈1.25·radius⌉ around
//! its centre, clipped to the document, runs the brush's steps with rain and shedding weighted
//! by the falloff; sediment settles and water drops; then `h ← h + s·(h_eroded − h)` over the
//! square, `s` the instance's strength × pressure. The same code serves the document (GPU) and
//! the CPU twin; only the backend differs.

use super::run::{erode, RunSpec, Weight};
use crate::brush::shared::BrushInstance;
use crate::brush::BrushSettings;
use crate::gpu::{Gpu, Result};
use crate::terrain::tiles::Region;
use std::sync::Arc;

/// The square an instance simulates in a `width` x `height` document (None when it lies
/// outside).
pub fn square(width: u32, height: u32, b: &BrushInstance) -> Option<Region> {
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

/// Erodes `heights`, the values of `square` (row-major), for instance `b` of `brush` with
/// `height_scale` texels per height unit, on `gpu` (None: the CPU twin).
pub fn erode_square(
    gpu: Option<&Arc<Gpu>>,
    heights: &mut [f32],
    square: Region,
    b: &BrushInstance,
    brush: &BrushSettings,
    height_scale: f32,
) -> Result<()> {
    let e = &brush.erosion;
    let spec = RunSpec {
        model: e.model,
        steps: e.steps as usize,
        params: e.params,
        height_scale: e.height_scale.unwrap_or(height_scale),
        weight: Some(Weight {
            center: [b.center[0] - square.x as f32, b.center[1] - square.y as f32],
            radius: b.radius,
            inner_radius: b.inner_radius,
            falloff: brush.falloff,
            falloff_power: brush.falloff_power,
        }),
    };
    let mut eroded = heights.to_vec();
    let whole = Region {
        x: 0,
        y: 0,
        ..square
    };
    erode(gpu, &mut eroded, square.width, whole, &spec, |_| {})?;
    for (h, e) in heights.iter_mut().zip(&eroded) {
        *h += b.strength * (e - *h);
    }
    Ok(())
}

//! A whole run over a region of a height grid: heights enter as `b = h · height_scale`, the
//! steps run on the GPU or the CPU twin, sediment settles and water drops at the end, and the
//! region's heights leave as `h = b / height_scale`. The rest of the grid is not touched.

use super::cpu::State;
use super::gpu::GpuErosion;
use super::params::{ErosionParams, Model};
use crate::gpu::{Gpu, Result};
use crate::pages::geometry::Region;
use std::sync::Arc;

/// What a run asks for.
#[derive(Clone, Copy, Debug)]
pub struct RunSpec {
    pub model: Model,
    pub steps: usize,
    pub params: ErosionParams,
    /// Texels per height unit.
    pub height_scale: f32,
}

impl RunSpec {
    /// The run `e` asks for on document `d` (its height scale, else the document's true
    /// vertical scale: texels per height unit).
    pub fn of(e: &super::ErosionBrush, d: &crate::pages::DocumentDesc) -> Self {
        Self {
            model: e.model,
            steps: e.steps as usize,
            params: e.params,
            height_scale: e.height_scale.unwrap_or_else(|| d.vertical_scale()),
        }
    }
}

/// Water depth and suspended sediment over the region at the end of the steps (before the
/// sediment settles), in height units.
#[derive(Clone, Debug, Default)]
pub struct RunOutput {
    pub water: Vec<f32>,
    pub sediment: Vec<f32>,
}

/// Erodes `region` of the `width`-wide grid `heights` in place, on `gpu` (None: the CPU twin),
/// calling `progress(steps done)` as it goes.
pub fn erode(
    gpu: Option<&Arc<Gpu>>,
    heights: &mut [f32],
    width: u32,
    region: Region,
    spec: &RunSpec,
    mut progress: impl FnMut(usize),
) -> Result<RunOutput> {
    let scale = spec.height_scale;
    let b: Vec<f32> = region
        .cut(heights, width)
        .into_iter()
        .map(|h| h * scale)
        .collect();
    let size = [region.width, region.height];
    let push = spec.params.push(size);
    let mut state = match gpu {
        Some(gpu) => {
            let mut g = GpuErosion::new(gpu, size, &b)?;
            g.run(&push, spec.model, spec.steps, None, &mut progress)?;
            g.state()?
        }
        None => {
            let mut st = State::new(size[0] as usize, size[1] as usize, b);
            for i in 0..spec.steps {
                st.step(&push, spec.model);
                if (i + 1) % 8 == 0 || i + 1 == spec.steps {
                    progress(i + 1);
                }
            }
            st
        }
    };
    let out = RunOutput {
        water: state.d.iter().map(|d| d / scale).collect(),
        sediment: state.s.iter().map(|s| s / scale).collect(),
    };
    state.settle();
    let w = region.width as usize;
    for (row, y) in (region.y..region.y + region.height).enumerate() {
        let start = (y * width + region.x) as usize;
        for (dst, b) in heights[start..start + w]
            .iter_mut()
            .zip(&state.b[row * w..(row + 1) * w])
        {
            *dst = b / scale;
        }
    }
    Ok(out)
}

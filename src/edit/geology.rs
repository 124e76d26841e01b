//! Geology as an edit (docs/geology.md): stream-power erosion with uplift over a region of the
//! base — its heights read from the page store, iterated on the GPU (or the CPU twin) in region
//! buffers, and written back as one undo step, as erosion regions are. Reshapes the base, never
//! a layer. CPU twin: [`crate::brush::cpu::CpuTerrain::geology_region`]. The pipelines are made
//! at the first use and kept in [`Tools`].

use crate::brush::error::{BrushError, Result};
use crate::document::Document;
use crate::geology::gpu::{GpuGeology, Kernels};
use crate::geology::params::GeologyRun;
use crate::geology::run::{RunOutput, RunSpec};
use crate::pages::geometry::Region;
use std::sync::Arc;

/// What geology keeps between edits: the pipelines.
#[derive(Default)]
pub struct Tools {
    kernels: Option<Arc<Kernels>>,
}

impl Tools {
    /// The stream-power pipelines, made on first use and kept.
    pub fn kernels(&mut self, gpu: &Arc<crate::gpu::Gpu>) -> Result<Arc<Kernels>> {
        if let Some(k) = &self.kernels {
            return Ok(k.clone());
        }
        let k = Arc::new(Kernels::new(gpu)?);
        self.kernels = Some(k.clone());
        Ok(k)
    }
}

/// Why `run` over `region` of the base cannot run now, if it cannot: a layer selected, a
/// region outside the document, a bad or unstable parameter, or (on the GPU) a region past
/// what the device binds at once.
pub fn check(doc: &Document, region: Region, run: &GeologyRun, gpu: bool) -> Result<()> {
    let most = gpu.then(|| GpuGeology::max_texels(doc.gpu()));
    super::check_base_region(doc, region, most, "run geology on a smaller region")?;
    run.validate().map_err(BrushError::Layer)?;
    run.params
        .validate_for(doc.desc().texel_size())
        .map_err(BrushError::Layer)
}

/// What a run over `region` of the base starts from, after every queued stroke: its heights
/// and the document's uplift map there (None: 1 everywhere). Refused as [`check`] refuses,
/// and where the painted map is below 0 (naming the texel).
pub fn inputs(
    doc: &mut Document,
    region: Region,
    run: &GeologyRun,
    gpu: bool,
) -> Result<(Vec<f32>, Option<Vec<f32>>)> {
    check(doc, region, run, gpu)?;
    let rect = region.rect();
    let heights = doc.base_rect(rect)?;
    let uplift = doc.uplift_rect(rect)?;
    if let Some(u) = &uplift {
        crate::geology::params::check_uplift(u, region.width, [region.x, region.y])
            .map_err(|e| BrushError::Layer(format!("the painted {e}")))?;
    }
    Ok((heights, uplift))
}

/// Runs `run` over `region` of the base (on the GPU, or the CPU twin without `gpu`) as one
/// undo step, after every queued stroke, under the document's uplift map (1 everywhere where it
/// has none); calls `progress(level,
/// iterations done, steady-state measure)`. Returns the drainage area and what each level ran.
pub fn region(
    doc: &mut Document,
    tools: &mut Tools,
    region: Region,
    run: &GeologyRun,
    gpu: bool,
    progress: impl FnMut(usize, usize, f32),
) -> Result<RunOutput> {
    let (mut heights, uplift) = inputs(doc, region, run, gpu)?;
    let spec = RunSpec::of(run, doc.desc());
    let backend = match gpu {
        true => Some((doc.gpu().clone(), tools.kernels(doc.gpu())?)),
        false => None,
    };
    let out = crate::geology::run::run(
        backend.as_ref().map(|(g, k)| (g, k)),
        &mut heights,
        [region.width, region.height],
        uplift.as_deref(),
        &spec,
        None,
        progress,
    )?;
    doc.write_base_rect(region.rect(), &heights, false)?;
    Ok(out)
}

//! `scarp erode`: hydraulic and thermal erosion (docs/erosion.md) over a height file or a region
//! of it, on the GPU or the CPU twin, with a progress bar. Every flag is checked before any work;
//! nothing is written unless the run succeeds.

use super::args::{is_project, parse_region, Backend, ProjectPart, ReadArgs};
use super::{bar, check_validation, open_gpu, read_input};
use crate::erosion::run::{erode, RunOutput, RunSpec};
use crate::erosion::{ErosionParams, Model};
use crate::gpu::Gpu;
use crate::pages::geometry::{check_region, Region};
use crate::terrain::export::write_heights;
use crate::terrain::formats::Heights;
use anyhow::{bail, Context as _, Result};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// `--model`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModelArg {
    Hydraulic,
    Thermal,
    /// A hydraulic step then a thermal step, per step.
    Both,
}

impl From<ModelArg> for Model {
    fn from(m: ModelArg) -> Self {
        match m {
            ModelArg::Hydraulic => Model::Hydraulic,
            ModelArg::Thermal => Model::Thermal,
            ModelArg::Both => Model::Both,
        }
    }
}

#[derive(Args)]
#[command(allow_negative_numbers = true)]
pub struct ErodeArgs {
    /// The height file to erode (any format Scarp reads), or a .scarp project (a layered
    /// project: its composite, as the editor shows it; see --base and --layer).
    #[arg(long)]
    heights: PathBuf,
    #[command(flatten)]
    read: ReadArgs,
    #[command(flatten)]
    part: ProjectPart,
    /// The eroded heights (any height format; the whole document, eroded inside --region).
    #[arg(long)]
    out: PathBuf,
    #[arg(long, value_enum, default_value_t = ModelArg::Both)]
    model: ModelArg,
    /// Steps to run.
    #[arg(long, default_value_t = 1000)]
    steps: usize,
    /// The simulated region X,Y,W,H in texels (outside it is a wall) [default: the document].
    #[arg(long, value_parser = parse_region)]
    region: Option<Region>,
    #[command(flatten)]
    params: ErosionParams,
    /// Texels per height unit [default: a quarter of the larger side, the renderer's default].
    #[arg(long)]
    height_scale: Option<f32>,
    /// Also write the water depth at the end (height units).
    #[arg(long)]
    water: Option<PathBuf>,
    /// Also write the suspended sediment at the end, before it settles (height units).
    #[arg(long)]
    sediment: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Backend::Gpu)]
    backend: Backend,
}

pub fn run(a: &ErodeArgs) -> Result<()> {
    let params = check_flags(a)?;
    let (mut grid, units) = match is_project(&a.heights) {
        true => super::project_input::heights(&a.heights, &a.part)?,
        false => read_input(&a.heights, &a.read)?,
    };
    let region = a.region.unwrap_or(Region::whole(grid.width, grid.height));
    check_region(grid.width, grid.height, region).map_err(|e| anyhow::anyhow!("--region: {e}"))?;
    let gpu = open_backend(a.backend, region)?;
    let spec = RunSpec {
        model: a.model.into(),
        steps: a.steps,
        params,
        // True scale: texels per height unit.
        height_scale: a.height_scale.unwrap_or_else(|| {
            let desc = crate::pages::DocumentDesc {
                units,
                ..crate::pages::DocumentDesc::for_heights(grid.width, grid.height)
            };
            desc.vertical_scale()
        }),
    };
    let b = bar(&format!("eroding ({} steps)", a.steps));
    b.set_length(a.steps as u64);
    let t0 = Instant::now();
    let out = erode(
        gpu.as_ref(),
        &mut grid.values,
        grid.width,
        region,
        &spec,
        |done| b.set_position(done as u64),
    )
    .context("erosion")?;
    b.finish_and_clear();
    let secs = t0.elapsed().as_secs_f64();
    if let Some(g) = &gpu {
        check_validation(g)?;
    }
    write_outputs(a, &grid, region, &out)?;
    let eroded = region.cut(&grid.values, grid.width);
    let (lo, hi) = crate::terrain::formats::min_max(&eroded);
    println!(
        "eroded {}x{} at {},{} ({}, {} steps, {}) in {:.2} s ({:.3} ms/step); heights {lo:.4}..{hi:.4} -> {}",
        region.width,
        region.height,
        region.x,
        region.y,
        Model::from(a.model).name(),
        a.steps,
        match a.backend {
            Backend::Gpu => "gpu",
            Backend::Cpu => "cpu",
        },
        secs,
        secs * 1e3 / a.steps as f64,
        a.out.display()
    );
    Ok(())
}

/// Checks the flags that need no heights (the erosion parameters, steps, height scale, the
/// output and input files); returns the erosion parameters.
fn check_flags(a: &ErodeArgs) -> Result<ErosionParams> {
    let params = a.params;
    params.validate().map_err(anyhow::Error::msg)?;
    let most = crate::erosion::params::MAX_BRUSH_STEPS as usize;
    if !(1..=most).contains(&a.steps) {
        bail!(
            "--steps must be 1 to {most} (a journal's erode step's bound), got {}",
            a.steps
        );
    }
    if let Some(s) = a.height_scale {
        if !(s.is_finite() && s > 0.0) {
            bail!("--height-scale must be above 0, got {s}");
        }
    }
    let outputs: Vec<&PathBuf> = std::iter::once(&a.out)
        .chain(a.water.iter())
        .chain(a.sediment.iter())
        .collect();
    super::args::check_outputs(&a.heights, &outputs, "--out, --water, --sediment")?;
    if !a.heights.is_file() {
        bail!("{}: not a file", a.heights.display());
    }
    a.part.check(&a.heights).map_err(anyhow::Error::msg)?;
    Ok(params)
}

/// The GPU to erode `region` on (None for the CPU backend), refused when the region is past
/// what it binds at once.
fn open_backend(backend: Backend, region: Region) -> Result<Option<Arc<Gpu>>> {
    let gpu = match backend {
        Backend::Gpu => Some(open_gpu()?),
        Backend::Cpu => None,
    };
    if let Some(g) = &gpu {
        let texels = u64::from(region.width) * u64::from(region.height);
        let max = crate::erosion::gpu::GpuErosion::max_texels(g);
        if texels > max {
            bail!(
                "--region: {}x{} texels is past what {} binds at once ({max} texels); erode a smaller region",
                region.width,
                region.height,
                g.info().name
            );
        }
    }
    Ok(gpu)
}

/// Writes the eroded heights to `--out`, and the water and sediment of `region` to `--water`
/// and `--sediment` when asked.
fn write_outputs(a: &ErodeArgs, grid: &Heights, region: Region, out: &RunOutput) -> Result<()> {
    write_heights(&a.out, grid.width, grid.height, &grid.values)?;
    if let Some(p) = &a.water {
        let all = in_document(&out.water, grid, region);
        write_heights(p, grid.width, grid.height, &all)?;
    }
    if let Some(p) = &a.sediment {
        let all = in_document(&out.sediment, grid, region);
        write_heights(p, grid.width, grid.height, &all)?;
    }
    Ok(())
}

/// The region's values in a grid the size of `grid`, 0 elsewhere.
fn in_document(values: &[f32], grid: &Heights, region: Region) -> Vec<f32> {
    let mut all = vec![0.0f32; grid.width as usize * grid.height as usize];
    region.paste(&mut all, grid.width, values);
    all
}

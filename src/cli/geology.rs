//! `scarp geology`: stream-power erosion with uplift (docs/geology.md) over a height file or a
//! region of it, coarse to fine, on the GPU or the CPU twin, with a progress bar. Every flag is
//! checked before any work; nothing is written unless the run succeeds.

use super::args::{is_project, parse_region, Backend, ProjectPart, ReadArgs};
use super::{bar, check_validation, open_gpu, read_input};
use crate::geology::gpu::{GpuGeology, Kernels};
use crate::geology::params::GeologyRun;
use crate::geology::run::{run as run_geology, RunSpec};
use crate::geology::GeologyParams;
use crate::pages::geometry::{check_region, Region};
use crate::pages::DocumentDesc;
use crate::terrain::export::write_heights;
use crate::terrain::formats::{Heights, WriteOptions};
use anyhow::{bail, Context as _, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

#[derive(Args)]
#[command(allow_negative_numbers = true)]
pub struct GeologyArgs {
    /// The height file (any format Scarp reads), or a .scarp project (its composite; see
    /// --base and --layer). Its units (texel size, height unit) give the metres.
    #[arg(long)]
    heights: PathBuf,
    #[command(flatten)]
    read: ReadArgs,
    #[command(flatten)]
    part: ProjectPart,
    /// The heights after the run (any height format; the whole document, changed inside
    /// --region), with the input's units in its sidecar.
    #[arg(long)]
    out: PathBuf,
    /// The region X,Y,W,H in texels (its border drains) [default: the document].
    #[arg(long, value_parser = parse_region)]
    region: Option<Region>,
    #[command(flatten)]
    params: GeologyParams,
    /// The uplift map: a height file of the document's size whose values multiply
    /// --uplift-rate texel by texel [default: the map a project stores, painted in the editor;
    /// else 1 everywhere].
    #[arg(long)]
    uplift: Option<PathBuf>,
    /// Iterations per level (with --until-steady: the most per level).
    #[arg(long, default_value_t = GeologyRun::default().iterations)]
    iterations: u32,
    /// Run each level until max |z' − z| / (Δt·U) over non-outlets is at most this (a
    /// fraction; 0.01 without a value).
    #[arg(long, num_args = 0..=1, default_missing_value = "0.01")]
    until_steady: Option<f32>,
    /// Between the measured iterations, solve each texel's steady-state equation for its height
    /// (Jacobi) instead of stepping Δt: the model's steady state in far fewer iterations where
    /// it settles, with no years between (needs --until-steady and --slope-exponent 1).
    #[arg(long)]
    solve_steady: bool,
    /// Coarse levels iterated first, each half the size of the one above [default: 0, or with
    /// --until-steady as many as keep the coarsest at least 64 texels a side].
    #[arg(long)]
    coarse: Option<u32>,
    /// Stop the whole run after this many iterations over every level, carrying the heights up
    /// from where it stopped (what the editor's *stop here* journals).
    #[arg(long)]
    stop_after: Option<u32>,
    /// Also write the drainage area A at the end, square metres (0 outside --region).
    #[arg(long)]
    drainage: Option<PathBuf>,
    /// Also print the region's drainage statistics before and after (Hack's exponent, pits,
    /// slope percentiles; docs/bench.md).
    #[arg(long)]
    stats: bool,
    #[arg(long, value_enum, default_value_t = Backend::Gpu)]
    backend: Backend,
}

pub fn run(a: &GeologyArgs) -> Result<()> {
    let geology = check_flags(a)?;
    let (mut grid, units) = match is_project(&a.heights) {
        true => super::project_input::heights(&a.heights, &a.part)?,
        false => read_input(&a.heights, &a.read)?,
    };
    let desc = DocumentDesc {
        units,
        ..DocumentDesc::for_heights(grid.width, grid.height)
    };
    let region = a.region.unwrap_or(Region::whole(grid.width, grid.height));
    check_region(grid.width, grid.height, region).map_err(|e| anyhow::anyhow!("--region: {e}"))?;
    a.params
        .validate_for(desc.texel_size())
        .map_err(anyhow::Error::msg)?;
    let geology = GeologyRun {
        coarse: auto_coarse(a, region),
        ..geology
    };
    let uplift = match &a.uplift {
        Some(p) => Some(read_uplift(p, a, &grid, region)?),
        None if is_project(&a.heights) => stored_uplift(&a.heights, region)?,
        None => None,
    };
    let spec = RunSpec::of(&geology, &desc);
    let gpu = match a.backend {
        Backend::Gpu => {
            let g = open_gpu()?;
            let most = GpuGeology::max_texels(&g);
            if u64::from(region.width) * u64::from(region.height) > most {
                bail!(
                    "--region: past what {} binds at once ({most} texels)",
                    g.info().name
                );
            }
            let k = Arc::new(Kernels::new(&g).context("geology kernels")?);
            Some((g, k))
        }
        Backend::Cpu => None,
    };
    let mut heights = region.cut(&grid.values, grid.width);
    let stats = |h: &[f32]| {
        let z: Vec<f32> = h.iter().map(|v| v * spec.height_unit).collect();
        crate::geology::stats::drainage(&z, [region.width, region.height], spec.tau)
    };
    let before = a.stats.then(|| stats(&heights));
    let levels = crate::geology::run::level_sizes([region.width, region.height], spec.coarse);
    let b = bar(&format!("geology ({} levels)", levels.len()));
    b.set_length((spec.iterations * levels.len()) as u64);
    let t0 = Instant::now();
    let out = run_geology(
        gpu.as_ref().map(|(g, k)| (g, k)),
        &mut heights,
        [region.width, region.height],
        uplift.as_deref(),
        &spec,
        None,
        |level, done, m| {
            b.set_position((level * spec.iterations + done) as u64);
            b.set_message(format!(
                "geology: level {}/{}, steady measure {m:.3}",
                level + 1,
                levels.len()
            ));
        },
    )
    .context("geology")?;
    b.finish_and_clear();
    let secs = t0.elapsed().as_secs_f64();
    if let Some((g, _)) = &gpu {
        check_validation(g)?;
    }
    region.paste(&mut grid.values, grid.width, &heights);
    write_result(&a.out, &grid, &desc)?;
    if let Some(p) = &a.drainage {
        let mut all = vec![0.0f32; grid.values.len()];
        region.paste(&mut all, grid.width, &out.area);
        write_heights(p, grid.width, grid.height, &all)?;
    }
    if let Some(b) = before {
        println!("before: {b}");
        println!("after:  {}", stats(&heights));
    }
    let iterations = out.iterations();
    let (lo, hi) = crate::terrain::formats::min_max(&heights);
    println!(
        "geology {}x{} at {},{} ({} level(s), {iterations} iterations, {}) in {secs:.2} s: {}; heights {:.1} to {:.1} m -> {}",
        region.width,
        region.height,
        region.x,
        region.y,
        out.levels.len(),
        match a.backend {
            Backend::Gpu => "gpu",
            Backend::Cpu => "cpu",
        },
        out.text(&geology),
        desc.metres(lo),
        desc.metres(hi),
        a.out.display()
    );
    Ok(())
}

/// Checks the flags that need no heights; returns the run they ask for (`--coarse` left to
/// [`auto_coarse`] when not given).
fn check_flags(a: &GeologyArgs) -> Result<GeologyRun> {
    let run = GeologyRun {
        params: a.params,
        iterations: a.iterations,
        until_steady: a.until_steady,
        solve_steady: a.solve_steady,
        coarse: a.coarse.unwrap_or(0),
        stop_after: a.stop_after,
    };
    run.validate().map_err(anyhow::Error::msg)?;
    let outputs: Vec<&PathBuf> = std::iter::once(&a.out).chain(a.drainage.iter()).collect();
    super::args::check_outputs(&a.heights, &outputs, "--out, --drainage")?;
    for p in std::iter::once(&a.heights).chain(a.uplift.iter()) {
        if !p.is_file() {
            bail!("{}: not a file", p.display());
        }
    }
    a.part.check(&a.heights).map_err(anyhow::Error::msg)?;
    Ok(run)
}

/// Without `--coarse`: none, or with `--until-steady` [`crate::geology::run::auto_coarse`].
fn auto_coarse(a: &GeologyArgs, region: Region) -> u32 {
    match (a.coarse, a.until_steady) {
        (Some(c), _) => c,
        (None, None) => 0,
        (None, Some(_)) => crate::geology::run::auto_coarse([region.width, region.height]),
    }
}

/// The uplift map's values over `region`, refused unless it is the document's size and finite
/// and at least 0.
fn read_uplift(path: &Path, a: &GeologyArgs, grid: &Heights, region: Region) -> Result<Vec<f32>> {
    let (map, _) = read_input(path, &a.read)?;
    if (map.width, map.height) != (grid.width, grid.height) {
        bail!(
            "{}: the uplift map is {}x{}, the document {}x{}",
            path.display(),
            map.width,
            map.height,
            grid.width,
            grid.height
        );
    }
    crate::geology::params::check_uplift(&map.values, map.width, [0, 0])
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok(region.cut(&map.values, map.width))
}

/// The uplift map a project stores (painted in the editor), over `region`; None where it has
/// none.
fn stored_uplift(path: &Path, region: Region) -> Result<Option<Vec<f32>>> {
    let opened = crate::project::open(path)?;
    let Some(map) = crate::project::PagedHeights::open_uplift(path, &opened)? else {
        return Ok(None);
    };
    let u = map.region(region)?.values;
    crate::geology::params::check_uplift(&u, region.width, [region.x, region.y])
        .map_err(|e| anyhow::anyhow!("{}: the stored {e}", path.display()))?;
    Ok(Some(u))
}

/// Writes the heights with the document's units in the sidecar.
fn write_result(out: &Path, grid: &Heights, desc: &DocumentDesc) -> Result<()> {
    crate::terrain::export::write_with_sidecar(
        out,
        grid,
        desc,
        (0, 0),
        &WriteOptions::default(),
        &mut |_, _| {},
    )?;
    Ok(())
}

//! `scarp export`: heights and material weight maps as an engine takes them (docs/engines.md) —
//! Unreal, Unity or Godot's Terrain3D — at the engine's sizes (resampled or cropped), with a
//! note of exactly what to enter in its import dialog. Every flag is checked before any work; a
//! failure removes what it wrote.

use super::args::{is_project, Backend, ProjectPart, ReadArgs};
use super::{check_validation, open_gpu, read_input};
use crate::pages::DocumentDesc;
use crate::render::look::Materials;
use crate::terrain::engines::{export, Engine, Fit, Request};
use anyhow::{Context as _, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct ExportArgs {
    /// The height file (any format Scarp reads), or a .scarp project (its composite; see
    /// --base and --layer). Its units (texel size, height unit) give the scales.
    #[arg(long)]
    heights: PathBuf,
    #[command(flatten)]
    read: ReadArgs,
    #[command(flatten)]
    part: ProjectPart,
    /// The engine.
    #[arg(long, value_enum)]
    engine: Engine,
    /// The files' path without extension, DIR/NAME: NAME.png (or .raw, .exr), the maps beside
    /// it (NAME_rock.png, NAME_splat0.png, NAME_control.exr) and NAME.txt, what to enter in the
    /// engine.
    #[arg(long)]
    out: PathBuf,
    /// How the document meets the engine's sizes.
    #[arg(long, value_enum, default_value_t = Fit::Resample)]
    fit: Fit,
    /// The heightmap's samples a side (one the engine takes) [default: the nearest to the
    /// document's, or with --fit crop the largest within it].
    #[arg(long)]
    resolution: Option<u32>,
    /// The material rules of the weight maps: a preset (alpine, desert, temperate) or a JSON
    /// file, as `scarp render --materials` takes them.
    #[arg(long, default_value = "alpine")]
    materials: String,
    /// Maps to write beside the heights, each a 32-bit EXR in its unit (docs/maps.md).
    #[arg(long, value_enum, value_delimiter = ',')]
    maps: Vec<crate::terrain::engines::MapKind>,
    #[arg(long, value_enum, default_value_t = Backend::Gpu)]
    backend: Backend,
}

pub fn run(a: &ExportArgs) -> Result<()> {
    let materials =
        Materials::load(&a.materials).map_err(|e| anyhow::anyhow!("--materials: {e}"))?;
    let dir = a.out.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(d) = dir {
        if !d.is_dir() {
            anyhow::bail!("--out: {} is not a folder", d.display());
        }
    }
    if a.out.file_name().is_none() {
        anyhow::bail!("--out: give a name, DIR/NAME");
    }
    let (grid, units) = match is_project(&a.heights) {
        true => super::project_input::heights(&a.heights, &a.part)?,
        false => read_input(&a.heights, &a.read)?,
    };
    let doc = DocumentDesc {
        units,
        ..DocumentDesc::for_heights(grid.width, grid.height)
    };
    let req = Request {
        engine: a.engine,
        fit: a.fit,
        resolution: a.resolution,
        maps: a.maps.clone(),
    };
    let gpu = match a.backend {
        Backend::Gpu => {
            let gpu = open_gpu()?;
            let k = crate::maps::gpu::Kernels::new(&gpu).context("map kernels")?;
            Some((gpu, k))
        }
        Backend::Cpu => None,
    };
    let written = export(&grid, &doc, req, &materials, &a.out, |h, push| match &gpu {
        Some((g, k)) => k.run(g, h, push).map_err(|e| e.to_string()),
        None => Ok(crate::maps::cpu::maps_region(h, push)),
    })?;
    if let Some((g, _)) = &gpu {
        check_validation(g)?;
    }
    for f in &written.files {
        println!("{}", f.display());
    }
    println!("{}", written.note.display());
    print!("{}", std::fs::read_to_string(&written.note)?);
    Ok(())
}

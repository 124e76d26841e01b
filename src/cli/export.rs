//! `scarp export`: heights and material weight maps as an engine takes them (docs/engines.md) —
//! Unreal, Unity or Godot's Terrain3D — at the engine's sizes (resampled or cropped), with a
//! note of exactly what to enter in its import dialog; and a glTF mesh for other tools. Every
//! flag is checked before any work; a failure removes what it wrote.

use super::args::{is_project, parse_region, parse_tiles, Backend, ProjectPart, ReadArgs};
use super::project_input::Source;
use super::{check_validation, open_gpu, read_input};
use crate::maps::kernels::{Cpu, MapKernels, OnGpu};
use crate::pages::geometry::{check_region, Region};
use crate::pages::DocumentDesc;
use crate::render::look::Materials;
use crate::terrain::engines::{export, Engine, Fit, Input, MapKind, Plan, Request};
use crate::terrain::formats::Heights;
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
    /// The engine [required unless --mesh].
    #[arg(long, value_enum, required_unless_present = "mesh")]
    engine: Option<Engine>,
    /// The files' path without extension, DIR/NAME: NAME.png (or .raw, .exr), the maps beside
    /// it (NAME_rock.png, NAME_splat0.png, NAME_control.exr) and NAME.txt, what to enter in the
    /// engine; NAME.glb with --mesh.
    #[arg(long)]
    out: PathBuf,
    /// The region X,Y,W,H in texels [default: the document].
    #[arg(long, value_parser = parse_region)]
    region: Option<Region>,
    /// A glTF 2.0 binary mesh of the region, NAME.glb, for Blender and other tools: positions in
    /// metres, normals, texture coordinates over the region (docs/engines.md, "A mesh").
    #[arg(long)]
    mesh: bool,
    /// The mesh's largest vertical distance from the heights at any texel, metres (0: every
    /// texel a vertex) [default: a quarter of the texel size].
    #[arg(long, value_name = "METRES", requires = "mesh")]
    mesh_error: Option<f64>,
    /// How the document meets the engine's sizes.
    #[arg(long, value_enum, default_value_t = Fit::Resample, requires = "engine")]
    fit: Fit,
    /// The heightmap's samples a side (one the engine takes; a tile's with --tiles) [default:
    /// the nearest to the document's, or with --fit crop the largest within it].
    #[arg(long, requires = "engine")]
    resolution: Option<u32>,
    /// Unreal's World Partition: CxR tiles of one of its sizes that share their edge samples,
    /// NAME_x{i}_y{j}.png and each weight map's NAME_rock_x{i}_y{j}.png.
    #[arg(long, value_parser = parse_tiles, requires = "engine")]
    tiles: Option<(u32, u32)>,
    /// The material rules of the weight maps: a preset (alpine, desert, temperate) or a JSON
    /// file, as `scarp render --materials` takes them.
    #[arg(long, default_value = "alpine")]
    materials: String,
    /// Maps to write beside the heights, each a 32-bit EXR in its unit (docs/maps.md).
    #[arg(long, value_enum, value_delimiter = ',', requires = "engine")]
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
    if let Some(k) = a.maps.iter().find(|k| k.stored()) {
        if !is_project(&a.heights) {
            anyhow::bail!(
                "--maps {}: only a .scarp project holds erosion's wear and deposits",
                k.name()
            );
        }
    }
    if let Some(e) = a.mesh_error {
        if !e.is_finite() || e < 0.0 {
            anyhow::bail!("--mesh-error must be a finite number of metres at least 0, not {e}");
        }
    }
    // A project is read a region at a time (only the pages the export touches); a height
    // file whole.
    let source = match is_project(&a.heights) {
        true => Source::Project(super::project_input::open(&a.heights, &a.part)?),
        false => {
            let (grid, units) = read_input(&a.heights, &a.read)?;
            Source::Dense(grid, units)
        }
    };
    let (width, height) = source.size();
    let whole = DocumentDesc {
        units: source.desc().units,
        ..DocumentDesc::for_heights(width, height)
    };
    let region = a.region.unwrap_or(Region::whole(width, height));
    check_region(width, height, region).map_err(|e| anyhow::anyhow!("--region: {e}"))?;
    // Everything the engine's plan or the mesh refuses is refused before anything is written.
    if let Some(engine) = a.engine {
        let size = [region.width, region.height];
        let tiles = a.tiles.unwrap_or((1, 1));
        let plan = Plan::tiled(engine, a.fit, a.resolution, size, whole.texel_size(), tiles)
            .map_err(anyhow::Error::msg)?;
        crate::terrain::engines::check(&plan, &a.maps).map_err(anyhow::Error::msg)?;
    }
    // The region and the texels around it in the document: the mesh's normals at its edges.
    let glb = match a.mesh {
        true => {
            let (around, inner) = region.apron([width, height]);
            let grid = source.region(around)?;
            Some(mesh(&grid, [around.x, around.y], inner, &whole, a)?)
        }
        false => None,
    };
    // The mesh is written first; a failed engine export (which removes its own files) takes it
    // with it.
    let mut glb_path = None;
    if let Some((bytes, summary)) = glb {
        let name = a.out.file_name().unwrap_or_default().to_string_lossy();
        let path = a.out.with_file_name(format!("{name}.glb"));
        crate::atomic_file::write_bytes_atomic(&path, &bytes)?;
        println!("{}: {summary}", path.display());
        glb_path = Some(path);
    }
    if let Some(engine) = a.engine {
        let mut area = Area {
            source: &source,
            region,
            project: &a.heights,
            opened: None,
            fields: Vec::new(),
        };
        if let Err(e) = for_engine(engine, &mut area, &whole, &materials, a) {
            if let Some(p) = &glb_path {
                let _ = std::fs::remove_file(p);
            }
            return Err(e);
        }
    }
    Ok(())
}

/// The export's region of its input, read a window at a time (a project's pages under it and
/// no others), and a project's stored maps (erosion's wear and deposits; 0 everywhere where it
/// has none: never eroded).
struct Area<'a> {
    source: &'a Source,
    region: Region,
    project: &'a std::path::Path,
    opened: Option<crate::project::Opened>,
    fields: Vec<(MapKind, Option<crate::project::PagedHeights>)>,
}

impl Area<'_> {
    /// `r` of the region as a region of the document.
    fn in_document(&self, r: Region) -> Region {
        Region {
            x: self.region.x + r.x,
            y: self.region.y + r.y,
            ..r
        }
    }
}

impl Input for Area<'_> {
    fn size(&self) -> [u32; 2] {
        [self.region.width, self.region.height]
    }

    fn heights(&mut self, r: Region) -> std::result::Result<Heights, String> {
        let r = self.in_document(r);
        self.source.region(r).map_err(|e| format!("{e:#}"))
    }

    fn holds(&self, kind: MapKind) -> bool {
        kind.stored() && matches!(self.source, Source::Project(_))
    }

    fn stored(&mut self, kind: MapKind, r: Region) -> std::result::Result<Heights, String> {
        let field = kind.stored_field().expect("a stored map");
        let at = self.in_document(r);
        if !self.fields.iter().any(|(k, _)| *k == kind) {
            if self.opened.is_none() {
                self.opened = Some(crate::project::open(self.project).map_err(|e| e.to_string())?);
            }
            let opened = self.opened.as_ref().expect("opened above");
            let paged = crate::project::PagedHeights::open_field(self.project, opened, field)
                .map_err(|e| e.to_string())?;
            self.fields.push((kind, paged));
        }
        let (_, paged) = self
            .fields
            .iter()
            .find(|(k, _)| *k == kind)
            .expect("opened");
        match paged {
            Some(f) => f.region(at).map_err(|e| e.to_string()),
            None => Ok(Heights {
                width: r.width,
                height: r.height,
                values: vec![0.0; r.samples() as usize],
            }),
        }
    }
}

/// The glTF file of `region` (texels of `grid`, whose first value is document texel
/// `origin`) and a line saying what it holds.
fn mesh(
    grid: &Heights,
    origin: [u32; 2],
    region: Region,
    desc: &DocumentDesc,
    a: &ExportArgs,
) -> Result<(Vec<u8>, String)> {
    let bound = a.mesh_error.unwrap_or(0.25 * desc.texel_size());
    let t0 = std::time::Instant::now();
    let grid = crate::mesh::Grid {
        values: &grid.values,
        width: grid.width,
        height: grid.height,
        origin,
    };
    let m = crate::mesh::build(grid, region, desc, bound)?;
    let name = a.out.file_name().unwrap_or_default().to_string_lossy();
    let bytes = crate::mesh::gltf::glb(&m, &name)?;
    let summary = format!(
        "{} vertices, {} triangles ({:.1}% of the region's {}), largest error {:.3} m (bound {bound} m), {:.1} MB in {:.2} s",
        m.positions.len(),
        m.triangles(),
        100.0 * m.triangles() as f64
            / (2.0 * f64::from(region.width - 1) * f64::from(region.height - 1)),
        2 * u64::from(region.width - 1) * u64::from(region.height - 1),
        m.max_error_m,
        bytes.len() as f64 / 1e6,
        t0.elapsed().as_secs_f64(),
    );
    Ok((bytes, summary))
}

/// Writes the engine's files of the export's `area` and prints them and its note.
fn for_engine(
    engine: Engine,
    area: &mut Area,
    whole: &DocumentDesc,
    materials: &Materials,
    a: &ExportArgs,
) -> Result<()> {
    let [width, height] = area.size();
    let doc = DocumentDesc {
        units: whole.units.from_texel(area.region.x, area.region.y),
        ..DocumentDesc::for_heights(width, height)
    };
    let req = Request {
        engine,
        fit: a.fit,
        resolution: a.resolution,
        maps: a.maps.clone(),
        tiles: a.tiles,
    };
    let gpu = match a.backend {
        Backend::Gpu => Some(open_gpu()?),
        Backend::Cpu => None,
    };
    let mut kernels: Box<dyn MapKernels> = match &gpu {
        Some(g) => Box::new(OnGpu::new(g).context("map kernels")?),
        None => Box::new(Cpu),
    };
    let bar = super::bar(&format!("exporting {}", a.out.display()));
    let written = export(
        area,
        &doc,
        req,
        materials,
        &a.out,
        kernels.as_mut(),
        &mut |done, total| {
            bar.set_length(total);
            bar.set_position(done);
        },
    );
    bar.finish_and_clear();
    let written = written?;
    if let Some(g) = &gpu {
        check_validation(g)?;
    }
    for f in &written.files {
        println!("{}", f.display());
    }
    println!("{}", written.note.display());
    print!("{}", std::fs::read_to_string(&written.note)?);
    Ok(())
}

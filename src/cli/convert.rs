//! `scarp convert`: a height file or a project to another format, a crop of it (`--region`), or
//! a tile set (`--tiles`: split into edge-sharing tiles, or stitch a tile set back;
//! [`crate::terrain::tiles`]), into any height file format or a `.scarp` project, with progress
//! bars. A project's tiles and crops are read a region at a time from its pages, so documents
//! past one file's limit export as tiles.

use super::args::{is_project, parse_region, parse_tiles, ProjectPart, ReadArgs};
use super::project_input::{Part, Source};
use super::{bar, read_input};
use crate::pages::geometry::encode;
use crate::pages::geometry::{check_region, Region};
use crate::pages::{DocumentDesc, PageId, Units};
use crate::terrain::export::check_writable;
use crate::terrain::formats::{Heights, WriteOptions, WriteReport};
use crate::terrain::tiles;
use anyhow::{anyhow, bail, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Args)]
pub struct ConvertArgs {
    /// The height file or project to read (a layered project: its composite, as the editor
    /// shows it; see --base and --layer); with --tiles, a tile-set pattern holding {i} and {j}
    /// ('land_x{i}_y{j}.png') to stitch.
    input: PathBuf,
    /// The file to write (any height format, or a .scarp project); with --tiles and one input
    /// file, the tiles' name: OUT.ext becomes OUT_x{i}_y{j}.ext.
    output: PathBuf,
    #[command(flatten)]
    read: ReadArgs,
    /// Bits per value where the output format offers a choice (png: 8 or 16, tif: 16 or 32).
    #[arg(long)]
    bits: Option<u8>,
    /// Only this crop of the input, X,Y,W,H in texels (x = column, y = row, from the top-left).
    #[arg(long, value_parser = parse_region)]
    region: Option<Region>,
    /// CxR tiles that share their edge texels (Unreal's and World Machine's convention):
    /// split the input into them, or stitch an input pattern's tiles into the output.
    #[arg(long, value_parser = parse_tiles)]
    tiles: Option<(u32, u32)>,
    #[command(flatten)]
    part: ProjectPart,
}

pub fn run(a: &ConvertArgs) -> Result<()> {
    let t0 = Instant::now();
    let pattern = tiles::is_pattern(&a.input);
    if pattern && a.tiles.is_none() {
        bail!(
            "{}: a tile-set pattern needs --tiles CxR",
            a.input.display()
        );
    }
    let split_into = a.tiles.filter(|_| !pattern);
    let to_project = a.output.extension().is_some_and(|e| e == "scarp");
    if split_into.is_some() && to_project {
        bail!(
            "{}: tiles are height files, not projects",
            a.output.display()
        );
    }
    // The first file written shows whether the output can be written at all.
    let first_out = match split_into {
        Some(_) => tiles::tile_path(&a.output, 0, 0),
        None => a.output.clone(),
    };
    if to_project {
        crate::atomic_file::check_folder(&first_out)?;
    } else {
        check_writable(&first_out)?;
    }
    if !pattern
        && a.input.canonicalize().ok() == first_out.canonicalize().ok()
        && first_out.exists()
    {
        bail!(
            "{}: input and output are the same file",
            first_out.display()
        );
    }
    let from_project = !pattern && is_project(&a.input);
    a.part.check(&a.input).map_err(anyhow::Error::msg)?;
    // One writer per project: held for the command, after the checks, before anything is read.
    let _lock = match to_project {
        true => Some(crate::project::lock::ProjectLock::acquire(
            &a.output,
            "scarp convert",
        )?),
        false => None,
    };
    let source = if from_project {
        Source::Project(super::project_input::open(&a.input, &a.part)?)
    } else {
        match a.tiles.filter(|_| pattern) {
            Some((cols, rows)) => {
                let (grid, units) = stitch(&a.input, cols, rows, &a.read)?;
                Source::Dense(grid, units)
            }
            None => {
                let (grid, units) = read_input(&a.input, &a.read)?;
                Source::Dense(grid, units)
            }
        }
    };
    // The part of the input converted: --region, else all of it.
    let (width, height) = source.size();
    let area = a.region.unwrap_or(Region {
        x: 0,
        y: 0,
        width,
        height,
    });
    check_region(width, height, area).map_err(|e| anyhow!("--region: {e}"))?;
    let parts =
        crate::terrain::export::parts(&a.output, area, split_into).map_err(anyhow::Error::msg)?;
    if to_project {
        let grid = source.region(area)?;
        let pages = write_project(&a.output, &grid, source.desc().units)?;
        println!(
            "{} -> {}: {}x{} in {pages} pages in {:.1} ms",
            a.input.display(),
            a.output.display(),
            grid.width,
            grid.height,
            t0.elapsed().as_secs_f64() * 1e3
        );
        return Ok(());
    }
    // Integer tiles share one height range (the whole input's unless --range gives one), so a
    // height is the same value in every tile and the tiles stitch back.
    let range = match (a.read.range, split_into) {
        (Some(r), _) => Some(r),
        (None, Some(_)) => Some(source.range()?),
        (None, None) => None,
    };
    // A failed part removes the parts written before it.
    crate::terrain::export::write_all(&parts, |out, r| -> Result<()> {
        let part = source.region(r)?;
        let report = write(out, (&part, &source.desc(), (r.x, r.y)), range, a)?;
        print_written(&a.input, out, &part, &report);
        Ok(())
    })?;
    if let Source::Project(Part::Composite(d)) = &source {
        super::check_validation(d.gpu())?;
    }
    println!(
        "{} file(s) in {:.1} ms",
        parts.len(),
        t0.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}

/// Stitches the tiles a pattern names, read as the first tile's sidecar says under the flags
/// (the units of the set and the range its tiles share); a tile that cannot be read is named in
/// the error.
fn stitch(pattern: &Path, cols: u32, rows: u32, read: &ReadArgs) -> Result<(Heights, Units)> {
    let first = tiles::pattern_path(pattern, 0, 0);
    let (options, units, sidecar) = read.for_file(&first).map_err(anyhow::Error::msg)?;
    if let Some(s) = sidecar {
        let note = format!(
            "{}: units and range from {}",
            pattern.display(),
            s.display()
        );
        super::note_on_success(note);
    }
    let stitched = tiles::read_set(pattern, cols, rows, &options).map_err(anyhow::Error::msg)?;
    if stitched.disagreeing_texels > 0 {
        eprintln!(
            "note: {} shared edge texel(s) differ between neighbouring tiles; the first tile's kept",
            stitched.disagreeing_texels
        );
    }
    Ok((stitched.grid, units))
}

/// Writes one grid, the part of document `doc` from texel `at`, with its sidecar and a progress
/// bar.
fn write(
    out: &Path,
    (grid, doc, at): (&Heights, &DocumentDesc, (u32, u32)),
    range: Option<(f32, f32)>,
    a: &ConvertArgs,
) -> Result<WriteReport> {
    let b = bar(&format!("writing {}", out.display()));
    let report = crate::terrain::export::write_with_sidecar(
        out,
        grid,
        doc,
        at,
        &WriteOptions {
            range,
            endian: a.read.endian,
            bits: a.bits,
            geo: None,
        },
        &mut |done, total| {
            b.set_length(total);
            b.set_position(done);
        },
    );
    b.finish_and_clear();
    Ok(report?)
}

fn print_written(input: &Path, out: &Path, grid: &Heights, report: &WriteReport) {
    let (lo, hi) = crate::terrain::formats::min_max(&grid.values);
    println!(
        "{} -> {}: {}x{}, heights {lo}..{hi}, {:?} {}-bit{}{}",
        input.display(),
        out.display(),
        grid.width,
        grid.height,
        report.kind,
        report.bits,
        report
            .range
            .map(|(a, b)| format!(", range {a}..{b}"))
            .unwrap_or_default(),
        if report.clamped > 0 {
            format!(", {} heights clamped into the range", report.clamped)
        } else {
            String::new()
        },
    );
}

/// Writes `grid` as a project of `units` (r32f, heights as they are, every page); returns the
/// pages.
fn write_project(out: &Path, grid: &Heights, units: Units) -> Result<usize> {
    use crate::project::v2::{self, PageToSave};
    let document = DocumentDesc {
        units,
        ..DocumentDesc::for_heights(grid.width, grid.height)
    };
    let pages: Vec<PageToSave> = document
        .page_ids()
        .map(|id| PageToSave { id, saved: None })
        .collect();
    let meta = crate::project::Meta {
        document,
        flat: 0.0,
        presets: Vec::new(),
        journal: None,
        layers: None,
        view: None,
        paints_uplift: false,
    };
    let read = |_: usize, ids: &[PageId]| {
        Ok(ids
            .iter()
            .map(|&id| encode(&document, &document.page_from_dense(&grid.values, id)))
            .collect())
    };
    let coarse = crate::pages::coarse::kept(&document)
        .then(|| crate::pages::coarse::dense_level(&document, &grid.values));
    let (_, report) = v2::save(out, &meta, &pages, &[], coarse.as_deref(), read, None, None)?;
    Ok(report.pages)
}

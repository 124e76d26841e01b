//! `scarp info FILE`: a height file's or project's size, its physical scale (texel size, extent,
//! height unit) and its height range in metres, where known.

use super::args::{is_project, ProjectPart, ReadArgs};
use crate::pages::geometry::DocumentDesc;
use crate::terrain::formats::MAX_TEXELS;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
#[command(allow_negative_numbers = true)]
pub struct InfoArgs {
    /// A height file (any format Scarp reads) or a .scarp project.
    file: PathBuf,
    #[command(flatten)]
    read: ReadArgs,
}

pub fn run(a: &InfoArgs) -> Result<()> {
    let (desc, range) = if is_project(&a.file) {
        let opened = crate::project::open(&a.file)?;
        let desc = opened.meta().document;
        // A project without layers stores each block's lowest and highest height: its range
        // without reading a page. Else the heights are read, as the editor shows them.
        let stored = match &opened {
            crate::project::Opened::V2(p) if !crate::project::PagedHeights::layered(&opened) => {
                p.coarse_level().map(|level| {
                    level
                        .iter()
                        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), t| {
                            (lo.min(t[0]), hi.max(t[1]))
                        })
                })
            }
            _ => None,
        };
        let range = match stored {
            Some(range) => Some(range),
            None => (u64::from(desc.width) * u64::from(desc.height) <= MAX_TEXELS)
                .then(|| super::project_input::heights(&a.file, &ProjectPart::default()))
                .transpose()?
                .map(|(h, _)| bounds(&h.values)),
        };
        (desc, range)
    } else {
        let (grid, units) = super::read_input(&a.file, &a.read)?;
        let desc = DocumentDesc {
            units,
            ..DocumentDesc::for_heights(grid.width, grid.height)
        };
        (desc, Some(bounds(&grid.values)))
    };
    for line in describe(&desc, range) {
        println!("{line}");
    }
    Ok(())
}

/// The lowest and highest of `values`.
fn bounds(values: &[f32]) -> (f32, f32) {
    values
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        })
}

/// What `info` prints of a document whose heights span `range` (None: not read).
pub fn describe(desc: &DocumentDesc, range: Option<(f32, f32)>) -> Vec<String> {
    let u = desc.units;
    let texel = desc.texel_size();
    let known = |v: Option<f64>| {
        if v.is_some() {
            ""
        } else {
            " (not known: the default)"
        }
    };
    let mut lines = vec![
        format!("size: {} x {} texels", desc.width, desc.height),
        format!("texel size: {} m{}", round(texel), known(u.texel_size)),
        format!(
            "extent: {} x {} km",
            round(f64::from(desc.width) * texel / 1000.0),
            round(f64::from(desc.height) * texel / 1000.0)
        ),
        format!(
            "height unit: {} m{}",
            round(desc.height_unit()),
            known(u.height_unit)
        ),
    ];
    if let Some(o) = u.height_origin {
        lines.push(format!("height origin: {} m", round(o)));
    }
    lines.push(match range {
        Some((lo, hi)) => format!(
            "heights: {} to {} m ({} to {} height units)",
            round(desc.metres(lo)),
            round(desc.metres(hi)),
            lo,
            hi
        ),
        None => "heights: not read (a document past one file's texels)".into(),
    });
    lines.push(format!(
        "true vertical scale: {} texels per height unit",
        desc.vertical_scale()
    ));
    lines
}

/// `v` to 4 significant digits past the integer part (no trailing zeros).
fn round(v: f64) -> String {
    let s = if v.abs() >= 1000.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.4}")
    };
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

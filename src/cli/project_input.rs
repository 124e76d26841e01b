//! A `.scarp` project as the commands read it (`convert`, `erode`, `render`): the composite of a
//! layered project, folded on the GPU as the editor folds it, unless `--base` or `--layer`
//! picks another part; a project without layers is its base.

use super::args::ProjectPart;
use crate::document::Document;
use crate::pages::geometry::Region;
use crate::pages::Units;
use crate::project::PagedHeights;
use crate::terrain::formats::Heights;
use anyhow::Result;
use std::path::Path;

/// The part of a project asked for.
pub enum Part {
    /// Pages read from the file a region at a time (the base, a layer, an unlayered project).
    Paged(PagedHeights),
    /// A layered project opened on the GPU: its height field is the composite.
    Composite(Box<Document>),
}

/// Opens `part` of the project at `path`.
pub fn open(path: &Path, part: &ProjectPart) -> Result<Part> {
    let opened = crate::project::open(path)?;
    if let Some(name) = &part.layer {
        return Ok(Part::Paged(PagedHeights::open_layer(path, opened, name)?));
    }
    if part.base || !PagedHeights::layered(&opened) {
        return Ok(Part::Paged(PagedHeights::of(path, opened)));
    }
    let gpu = super::open_gpu()?;
    let tables = crate::noise::NoiseTables::default();
    let (doc, _, _) = crate::session::open_project_file(&gpu, path, &tables)?;
    super::check_validation(&gpu)?;
    Ok(Part::Composite(Box::new(doc)))
}

/// The whole of `part` of the project at `path` as a grid, and the document's units.
pub fn heights(path: &Path, part: &ProjectPart) -> Result<(Heights, Units)> {
    match open(path, part)? {
        Part::Paged(p) => {
            let (width, height) = p.size();
            let whole = Region {
                x: 0,
                y: 0,
                width,
                height,
            };
            Ok((p.region(whole)?, p.desc().units))
        }
        Part::Composite(mut d) => {
            let desc = *d.desc();
            let grid = Heights {
                width: desc.width,
                height: desc.height,
                values: d.to_dense()?,
            };
            Ok((grid, desc.units))
        }
    }
}

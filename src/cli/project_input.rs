//! A `.scarp` project as the commands read it (`convert`, `export`, `erode`, `render`): the
//! composite of a layered project, folded on the GPU as the editor folds it, unless `--base` or
//! `--layer` picks another part; a project without layers is its base. [`Source`] is a height
//! file's grid or a project's part, read a region at a time (`convert` and `export` read only
//! the pages of the region they write).

use super::args::ProjectPart;
use crate::document::Document;
use crate::pages::geometry::{DocumentDesc, Region};
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
    let part = open(path, part)?;
    let d = part.desc();
    Ok((part.read(Region::whole(d.width, d.height))?, d.units))
}

impl Part {
    /// The whole document's description.
    pub fn desc(&self) -> DocumentDesc {
        match self {
            Part::Paged(p) => *p.desc(),
            Part::Composite(d) => *d.desc(),
        }
    }

    /// The heights of `region` (inside the document): only the pages it touches are read.
    pub fn read(&self, region: Region) -> Result<Heights> {
        Ok(match self {
            Part::Paged(p) => p.region(region)?,
            Part::Composite(d) => Heights {
                width: region.width,
                height: region.height,
                values: crate::pages::rects::read(d.height(), region.rect())?,
            },
        })
    }
}

/// What a command reads heights from: a height file's grid in memory, or a project's part read
/// a region at a time.
pub enum Source {
    /// A height file's grid and units.
    Dense(Heights, Units),
    Project(Part),
}

impl Source {
    /// The whole document's description (a height file's: its size and units).
    pub fn desc(&self) -> DocumentDesc {
        match self {
            Source::Dense(g, units) => DocumentDesc {
                units: *units,
                ..DocumentDesc::for_heights(g.width, g.height)
            },
            Source::Project(p) => p.desc(),
        }
    }

    pub fn size(&self) -> (u32, u32) {
        let d = self.desc();
        (d.width, d.height)
    }

    /// The heights of `r` (inside the document).
    pub fn region(&self, r: Region) -> Result<Heights> {
        match self {
            Source::Dense(g, _) => crate::terrain::tiles::crop(g, r).map_err(anyhow::Error::msg),
            Source::Project(p) => p.read(r),
        }
    }

    /// The whole input's height range (for integer files).
    pub fn range(&self) -> Result<(f32, f32)> {
        let (lo, hi) = match self {
            Source::Dense(g, _) => crate::terrain::formats::min_max(&g.values),
            Source::Project(Part::Paged(p)) => p.min_max()?,
            Source::Project(Part::Composite(d)) => {
                crate::terrain::formats::min_max(&d.height().to_dense()?)
            }
        };
        Ok(crate::terrain::formats::default_range(&[lo, hi]))
    }
}

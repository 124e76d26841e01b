//! `.scarp` project files: the document (format, range, page grid and the pages that are not
//! flat), brush presets and the stroke journal since the previous save. Scarp writes version 2
//! ([`v2`]: sparse, page-granular, incremental and crash-safe saves, pages read lazily) and still
//! reads version 1 ([`v1`]: one file written whole). Next to a project,
//! `NAME.scarp.recovery.json` holds the strokes made since its last save (rewritten after every
//! step): after a crash the editor offers to replay them onto the saved project, which gives the
//! heights of the moment before the crash bit for bit.

pub mod lock;
pub mod v1;
pub mod v2;

use crate::atomic_file::{write_bytes_atomic, FileError};
use crate::journal::{BrushEntry, JournalFile};
use crate::pages::geometry::Region;
use crate::pages::geometry::{DocumentDesc, PageId};
use crate::terrain::formats::Heights;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub use v1::Project;

pub const MAGIC: &[u8; 8] = b"SCARPPRJ";
/// Version of the recovery files.
pub const RECOVERY_VERSION: u32 = 1;

/// What a project says besides its pages.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    pub document: DocumentDesc,
    /// Height of pages that are not stored.
    pub flat: f32,
    /// Brush presets by name (the brush JSON of presets and journals).
    #[serde(default)]
    pub presets: Vec<(String, BrushEntry)>,
    /// The journal of the strokes made before the save (provenance), if any.
    #[serde(default)]
    pub journal: Option<JournalFile>,
    /// A layered document's stack (docs/layers.md): the project's pages are then the base's,
    /// and each layer's fields are stored beside them (version 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layers: Option<crate::layers::StackFile>,
    /// How the document was seen when it was saved (the editor's camera, sun, sea, look).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view: Option<crate::render::saved_view::SavedView>,
    /// Strokes painted the geology uplift map when it was saved (docs/geology.md): the steps a
    /// recovery journal holds after the save go on painting it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paints_uplift: bool,
}

/// A project file as opened: version 1 read whole, version 2 its index only. (One per opened
/// file, moved once: boxing the larger variant would buy nothing.)
#[allow(clippy::large_enum_variant)]
pub enum Opened {
    V1(Project),
    V2(v2::SparseProject),
}

impl Opened {
    pub fn meta(&self) -> Meta {
        match self {
            Opened::V1(p) => Meta {
                document: p.document,
                flat: p.flat,
                presets: p.presets.clone(),
                journal: p.journal.clone(),
                layers: None,
                view: None,
                paints_uplift: false,
            },
            Opened::V2(p) => p.meta.clone(),
        }
    }
}

/// A project's heights read on the CPU, a region at a time: how tiles and crops of documents of
/// any size are exported without the whole document in memory.
pub struct PagedHeights {
    document: DocumentDesc,
    flat: f32,
    pages: std::collections::BTreeMap<PageId, PageBytes>,
    path: PathBuf,
}

enum PageBytes {
    InMemory(Vec<f32>),
    OnDisk(crate::pages::disk::DiskLoc),
}

impl PagedHeights {
    /// The heights of the project `opened` from `path`.
    pub fn of(path: &Path, opened: Opened) -> Self {
        let (document, flat, pages) = match opened {
            Opened::V1(p) => (
                p.document,
                p.flat,
                p.pages
                    .into_iter()
                    .map(|(id, h)| (id, PageBytes::InMemory(h)))
                    .collect(),
            ),
            Opened::V2(p) => (
                p.meta.document,
                p.meta.flat,
                p.pages
                    .into_iter()
                    .map(|(id, loc)| (id, PageBytes::OnDisk(loc)))
                    .collect(),
            ),
        };
        Self {
            document,
            flat,
            pages,
            path: path.to_path_buf(),
        }
    }

    /// The values of layer `name` of the (version-2, layered) project `opened` from `path`: its value
    /// field, as the layer stores it (r32f pages, document units).
    pub fn open_layer(path: &Path, opened: Opened, name: &str) -> Result<Self, FileError> {
        let Opened::V2(p) = opened else {
            return Err(FileError::invalid(
                path,
                "a version-1 project has no layers",
            ));
        };
        let stack = p.meta.layers.as_ref().ok_or_else(|| {
            FileError::invalid(
                path,
                format!("no layer {name:?}: the project has no layers"),
            )
        })?;
        let stack = stack
            .check()
            .map_err(|e| FileError::invalid(path, format!("layers: {e}")))?;
        let layer = stack
            .layers
            .iter()
            .find(|l| l.name == name)
            .ok_or_else(|| {
                let names: Vec<&str> = stack.layers.iter().map(|l| l.name.as_str()).collect();
                FileError::invalid(
                    path,
                    format!("no layer {name:?} (layers: {})", names.join(", ")),
                )
            })?;
        Self::stored_field(path, &p, name, &layer.field(crate::layers::Part::Value))
    }

    /// The geology uplift map the project at `path` stored (docs/geology.md), if it stored one.
    pub fn open_uplift(path: &Path, opened: &Opened) -> Result<Option<Self>, FileError> {
        Self::open_field(path, opened, crate::geology::UPLIFT_FIELD)
    }

    /// Field `name` (an uplift map, erosion's wear or deposits) the project at `path` stored,
    /// if it stored one.
    pub fn open_field(path: &Path, opened: &Opened, name: &str) -> Result<Option<Self>, FileError> {
        let Opened::V2(p) = opened else {
            return Ok(None);
        };
        if !p.fields.iter().any(|f| f.name == name) {
            return Ok(None);
        }
        Self::stored_field(path, p, name, name).map(Some)
    }

    /// The stored field `field` of layer `layer` of the version-2 project `p` from `path` (r32f
    /// pages, document units).
    fn stored_field(
        path: &Path,
        p: &v2::SparseProject,
        layer: &str,
        field: &str,
    ) -> Result<Self, FileError> {
        let stored = p.fields.iter().find(|f| f.name == field).ok_or_else(|| {
            FileError::invalid(
                path,
                format!("layer {layer:?}: field {field} is not stored"),
            )
        })?;
        Ok(Self {
            document: crate::layers::composite::f32_desc(&p.meta.document),
            flat: stored.flat,
            pages: stored
                .pages
                .iter()
                .map(|(id, loc)| (*id, PageBytes::OnDisk(loc.clone())))
                .collect(),
            path: path.to_path_buf(),
        })
    }

    /// The whole document's heights.
    pub fn whole(&self) -> Result<Heights, FileError> {
        let (width, height) = self.size();
        self.region(Region {
            x: 0,
            y: 0,
            width,
            height,
        })
    }

    /// Whether the project `opened` has layers (its heights are then their composite).
    pub fn layered(opened: &Opened) -> bool {
        let layers = match opened {
            Opened::V1(_) => return false,
            Opened::V2(p) => &p.meta.layers,
        };
        layers.as_ref().is_some_and(|l| !l.layers.is_empty())
    }

    pub fn size(&self) -> (u32, u32) {
        (self.document.width, self.document.height)
    }

    pub fn desc(&self) -> &DocumentDesc {
        &self.document
    }

    fn page(&self, id: PageId) -> Result<Option<Vec<f32>>, FileError> {
        Ok(match self.pages.get(&id) {
            None => None,
            Some(PageBytes::InMemory(h)) => Some(h.clone()),
            Some(PageBytes::OnDisk(loc)) => {
                Some(v2::read_page_heights(&self.path, &self.document, id, loc)?)
            }
        })
    }

    /// The heights of `region` (which must lie inside the document).
    pub fn region(&self, region: Region) -> Result<Heights, FileError> {
        let d = &self.document;
        let (w, h) = (region.width as usize, region.height as usize);
        let rect = region.rect();
        let mut values = vec![self.flat; w * h];
        for id in d.pages_in(&rect) {
            let Some(page) = self.page(id)? else { continue };
            let r = d.page_rect(id);
            let both = r.intersect(&rect);
            for y in both.y0..both.y1 {
                let src = (y - r.y0) as usize * r.width() as usize + (both.x0 - r.x0) as usize;
                let dst = (y - rect.y0) as usize * w + (both.x0 - rect.x0) as usize;
                let n = both.width() as usize;
                values[dst..dst + n].copy_from_slice(&page[src..src + n]);
            }
        }
        Ok(Heights {
            width: region.width,
            height: region.height,
            values,
        })
    }

    /// The lowest and highest height of the document (flat pages included), reading every page.
    pub fn min_max(&self) -> Result<(f32, f32), FileError> {
        let all_stored = self.pages.len() as u64
            == self.document.pages_x() as u64 * self.document.pages_y() as u64;
        let (mut lo, mut hi) = if all_stored {
            (f32::INFINITY, f32::NEG_INFINITY)
        } else {
            (self.flat, self.flat)
        };
        for &id in self.pages.keys() {
            let (a, b) = crate::terrain::formats::min_max(&self.page(id)?.unwrap_or_default());
            lo = lo.min(a);
            hi = hi.max(b);
        }
        Ok((lo, hi))
    }
}

/// The heights of the project at `path` as the editor shows them, read on the CPU: a layered
/// project's composite (the base, then each visible layer's value, alpha and mask folded texel
/// by texel in stack order: the CPU twin of the compositor, [`crate::layers::fold_texel`];
/// equal to the GPU's fold within f32 rounding), else its base. What journals' initial files
/// and layers' files read from a project.
pub fn composite_heights(path: &Path) -> Result<Heights, FileError> {
    let opened = open(path)?;
    let d = opened.meta().document;
    if u64::from(d.width) * u64::from(d.height) > crate::terrain::formats::MAX_TEXELS {
        return Err(FileError::invalid(
            path,
            format!(
                "a {}x{} project is too large to read whole (at most {} texels)",
                d.width,
                d.height,
                crate::terrain::formats::MAX_TEXELS
            ),
        ));
    }
    if !PagedHeights::layered(&opened) {
        return PagedHeights::of(path, opened).whole();
    }
    let Opened::V2(p) = opened else {
        unreachable!("only version-2 projects have layers")
    };
    let stack = p
        .meta
        .layers
        .as_ref()
        .expect("a layered project")
        .check()
        .map_err(|e| FileError::invalid(path, format!("layers: {e}")))?;
    let desc = p.meta.document;
    let mut layers = Vec::new();
    for l in stack.layers.iter().filter(|l| l.weight() > 0.0) {
        let mut parts = Vec::with_capacity(3);
        for part in crate::layers::Part::ALL {
            let field = PagedHeights::stored_field(path, &p, &l.name, &l.field(part))?;
            parts.push(field.whole()?.values);
        }
        layers.push((l.mode, l.weight(), parts));
    }
    let mut heights = PagedHeights::of(path, Opened::V2(p)).whole()?;
    for (i, h) in heights.values.iter_mut().enumerate() {
        let folded = crate::layers::fold_texel(
            *h,
            layers
                .iter()
                .map(|(mode, w, f)| (*mode, *w, [f[0][i], f[1][i], f[2][i]])),
        );
        *h = desc.quantize(folded);
    }
    Ok(heights)
}

/// Reads a height file (any format `terrain::formats` reads, with `options`) or a `.scarp`
/// project as the editor shows it ([`composite_heights`]; of `options.size` if given).
pub fn read_heights(
    path: &Path,
    options: &crate::terrain::formats::ReadOptions,
) -> Result<Heights, FileError> {
    if !path.extension().is_some_and(|e| e == "scarp") {
        return crate::terrain::formats::read(path, options);
    }
    let heights = composite_heights(path)?;
    if let Some((w, h)) = options.size {
        if (heights.width, heights.height) != (w, h) {
            return Err(FileError::invalid(
                path,
                format!(
                    "a {}x{} project where {w}x{h} is needed",
                    heights.width, heights.height
                ),
            ));
        }
    }
    Ok(heights)
}

/// The version number in the header of the project file at `path`.
pub fn version_of(path: &Path) -> Result<u32, FileError> {
    use std::os::unix::fs::FileExt;
    let file = crate::atomic_file::open_regular(path).map_err(FileError::io(path))?;
    let mut head = [0u8; 12];
    file.read_exact_at(&mut head, 0)
        .map_err(|_| FileError::invalid(path, "too short for a project file"))?;
    if &head[..8] != MAGIC {
        return Err(FileError::invalid(path, "not a Scarp project (bad magic)"));
    }
    Ok(u32::from_le_bytes(head[8..12].try_into().expect("4 bytes")))
}

static ACCEPT_OLDER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a project whose newest save is damaged opens at its older intact save (the command
/// line's `--accept-older`) instead of being refused: never silently.
pub fn set_accept_older(on: bool) {
    ACCEPT_OLDER.store(on, std::sync::atomic::Ordering::Relaxed);
}

fn accepts_older() -> bool {
    ACCEPT_OLDER.load(std::sync::atomic::Ordering::Relaxed)
}

/// Runs `f` with projects whose newest save is damaged opened at their older save (the
/// editor, once the user has said so), then restores the setting.
pub fn with_older_accepted<T>(f: impl FnOnce() -> T) -> T {
    let was = accepts_older();
    set_accept_older(true);
    let out = f();
    set_accept_older(was);
    out
}

/// What [`open`] refusing a project for its damaged newest save says of it ("...; the older
/// save #11 is intact"); None for any other error (a lock, a missing file).
pub fn older_save_offer(e: &FileError) -> Option<String> {
    match e {
        FileError::OlderSaveOnly { older, .. } => Some(format!("{older} is intact")),
        _ => None,
    }
}

/// Opens the project at `path`, whichever version it is; errors name the file and the problem.
/// A version-2 file whose newest save is damaged (its record altered, its tail truncated) is
/// refused, naming the damage and the older save it still holds, unless [`set_accept_older`].
pub fn open(path: &Path) -> Result<Opened, FileError> {
    let meta = std::fs::metadata(path).map_err(FileError::io(path))?;
    if !meta.is_file() {
        return Err(FileError::invalid(path, "not a regular file"));
    }
    match version_of(path)? {
        v1::VERSION => Ok(Opened::V1(v1::load(path)?)),
        v2::VERSION => {
            let p = v2::open(path)?;
            if let Some(damage) = &p.damaged {
                let older = format!("{damage}; the older save #{}", p.save_number());
                if !accepts_older() {
                    return Err(FileError::OlderSaveOnly {
                        path: path.to_path_buf(),
                        older,
                    });
                }
                eprintln!("note: {}: {older} was opened", path.display());
            }
            Ok(Opened::V2(p))
        }
        v => Err(FileError::invalid(
            path,
            format!(
                "project version {v}: this scarp reads versions {} and {}",
                v1::VERSION,
                v2::VERSION
            ),
        )),
    }
}

/// What a recovery file is tied to: one save of a project file. Version 2: the save's sequence
/// number and index CRC ([`v2::SparseProject::identity`]); version 1: the checksum stored in
/// its last 8 bytes. Either way the editor need not read the whole project after every step.
pub fn file_checksum(path: &Path) -> Result<u64, FileError> {
    use std::io::{Read, Seek, SeekFrom};
    if version_of(path)? == v2::VERSION {
        return v2::file_identity(path);
    }
    let mut file = crate::atomic_file::open_regular(path).map_err(FileError::io(path))?;
    if file.metadata().map_err(FileError::io(path))?.len() < 28 {
        return Err(FileError::invalid(path, "too short for a project file"));
    }
    file.seek(SeekFrom::End(-8)).map_err(FileError::io(path))?;
    let mut tail = [0u8; 8];
    file.read_exact(&mut tail).map_err(FileError::io(path))?;
    Ok(u64::from_le_bytes(tail))
}

/// Where the recovery journal of `project` lives.
pub fn recovery_path(project: &Path) -> PathBuf {
    let mut name = project.file_name().unwrap_or_default().to_os_string();
    name.push(".recovery.json");
    project.with_file_name(name)
}

/// The strokes made since a project's last save, tied to that save by its checksum.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recovery {
    pub version: u32,
    /// [`file_checksum`] of the project file the steps apply to.
    pub project_checksum: u64,
    /// A journal of the project's document (initial heights: the project) and the
    /// steps since the save.
    pub journal: JournalFile,
}

/// Writes the recovery file of `project` atomically.
pub fn write_recovery(project: &Path, recovery: &Recovery) -> Result<(), FileError> {
    let path = recovery_path(project);
    let text =
        serde_json::to_string(recovery).map_err(|e| FileError::invalid(&path, e.to_string()))?;
    write_bytes_atomic(&path, text.as_bytes())
}

/// The recovery file of `project`, if one exists for its current save (a recovery file left
/// from another save of the project is reported as stale).
pub fn read_recovery(project: &Path) -> Result<Option<Recovery>, FileError> {
    let path = recovery_path(project);
    if !path.exists() {
        return Ok(None);
    }
    let at = |problem: String| FileError::invalid(&path, problem);
    let text = crate::atomic_file::read_regular_to_string(&path).map_err(FileError::io(&path))?;
    let r: Recovery = serde_json::from_str(&text).map_err(|e| at(e.to_string()))?;
    if r.version != RECOVERY_VERSION {
        return Err(at(format!(
            "version {} is not {RECOVERY_VERSION}",
            r.version
        )));
    }
    if r.project_checksum != file_checksum(project)? {
        return Err(at(format!(
            "belongs to another save of {} (stale): not applied",
            project.display()
        )));
    }
    Ok(Some(r))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pages::geometry::HeightFormat;

    fn meta() -> Meta {
        let document = DocumentDesc {
            width: 300,
            height: 200,
            format: HeightFormat::R32f,
            page_size: 128,
            height_min: 0.0,
            height_max: 1.0,
            units: Default::default(),
        };
        Meta {
            document,
            flat: 0.25,
            presets: Vec::new(),
            journal: None,
            layers: None,
            view: None,
            paints_uplift: false,
        }
    }

    #[test]
    fn recovery_files_belong_to_one_save() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.scarp");
        let m = meta();
        let journal =
            JournalFile::of(&m.document, &crate::journal::Initial::Flat(0.25), &[]).unwrap();
        v2::save(&p, &m, &[], &[], None, |_, _| Ok(Vec::new()), None, None).unwrap();
        assert!(read_recovery(&p).unwrap().is_none());
        let r = Recovery {
            version: RECOVERY_VERSION,
            project_checksum: file_checksum(&p).unwrap(),
            journal,
        };
        write_recovery(&p, &r).unwrap();
        assert_eq!(read_recovery(&p).unwrap(), Some(r));
        let other = Meta {
            flat: 0.5,
            ..meta()
        };
        v2::save(
            &p,
            &other,
            &[],
            &[],
            None,
            |_, _| Ok(Vec::new()),
            None,
            None,
        )
        .unwrap();
        assert!(read_recovery(&p).unwrap_err().to_string().contains("stale"));
    }
}

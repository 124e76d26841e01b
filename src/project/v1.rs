//! Version-1 `.scarp` projects: the document, the heights of every page that is not flat, brush
//! presets and the journal, in one file written whole. Scarp reads them still and writes
//! version 2 ([`super::v2`]); [`save`] remains to make version-1 files for tests.
//!
//! Layout (little-endian):
//!
//! | bytes | content |
//! |---|---|
//! | 8 | magic `SCARPPRJ` |
//! | 4 | version (1) |
//! | 8 | header length N (at most 64 MiB) |
//! | N | header, JSON: `document`, `flat`, `pages` (`[x, y]` in payload order), `presets`, `journal` |
//! | … | each listed page's heights, f32, row-major |
//! | 8 | FNV-1a 64 of everything before |
//!
//! [`load`] checks the magic, version, lengths, every field, that every page lies in the
//! document once, that the payload fills the file exactly, the checksum and that every height is
//! finite, before anything is used: a bad file is an error naming the file and the problem.

use crate::atomic_file::{write_atomic, FileError};
use crate::journal::{BrushEntry, JournalFile};
use crate::pages::geometry::{DocumentDesc, PageId};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;

use super::MAGIC;

pub const VERSION: u32 = 1;
/// Largest header.
pub const MAX_HEADER: u64 = 64 << 20;

/// A project in memory.
#[derive(Clone, Debug, PartialEq)]
pub struct Project {
    pub document: DocumentDesc,
    /// Height of pages that hold no memory.
    pub flat: f32,
    /// Heights of the pages that hold memory (each the page's texels, row-major).
    pub pages: Vec<(PageId, Vec<f32>)>,
    /// Brush presets by name (the brush JSON of presets and journals).
    pub presets: Vec<(String, BrushEntry)>,
    /// The journal of the strokes made since the previous save (provenance), if any.
    pub journal: Option<JournalFile>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    document: DocumentDesc,
    flat: f32,
    pages: Vec<[u32; 2]>,
    #[serde(default)]
    presets: Vec<(String, BrushEntry)>,
    #[serde(default)]
    journal: Option<JournalFile>,
}

/// FNV-1a, 64 bits.
fn fnv1a(bytes: &[u8], mut h: u64) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// A writer that hashes what passes through.
struct Hashing<W> {
    inner: W,
    hash: u64,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash = fnv1a(&buf[..n], self.hash);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn page_texels(d: &DocumentDesc, id: PageId) -> usize {
    let r = d.page_rect(id);
    r.width() as usize * r.height() as usize
}

/// Checks what [`save`] would write; errors name the problem.
fn check(p: &Project) -> Result<(), String> {
    p.document
        .validate()
        .map_err(|e| format!("document: {e}"))?;
    if !p.flat.is_finite() {
        return Err(format!("flat height {} is not finite", p.flat));
    }
    let mut seen = std::collections::BTreeSet::new();
    for (id, heights) in &p.pages {
        if id.x >= p.document.pages_x() || id.y >= p.document.pages_y() {
            return Err(format!("page {},{} lies outside the document", id.x, id.y));
        }
        if !seen.insert(*id) {
            return Err(format!("page {},{} is listed twice", id.x, id.y));
        }
        if heights.len() != page_texels(&p.document, *id) {
            return Err(format!(
                "page {},{} holds {} heights, {} expected",
                id.x,
                id.y,
                heights.len(),
                page_texels(&p.document, *id)
            ));
        }
        if let Some(i) = heights.iter().position(|h| !h.is_finite()) {
            return Err(format!(
                "page {},{}: non-finite height at texel {i}",
                id.x, id.y
            ));
        }
    }
    Ok(())
}

/// Writes `project` to `w` in the `.scarp` layout.
pub fn write_to<W: Write>(w: W, project: &Project) -> Result<(), String> {
    check(project)?;
    let header = Header {
        document: project.document,
        flat: project.flat,
        pages: project.pages.iter().map(|(id, _)| [id.x, id.y]).collect(),
        presets: project.presets.clone(),
        journal: project.journal.clone(),
    };
    let json = serde_json::to_vec(&header).map_err(|e| e.to_string())?;
    let mut out = Hashing {
        inner: w,
        hash: FNV_OFFSET,
    };
    let io = |e: std::io::Error| e.to_string();
    out.write_all(MAGIC).map_err(io)?;
    out.write_all(&VERSION.to_le_bytes()).map_err(io)?;
    out.write_all(&(json.len() as u64).to_le_bytes())
        .map_err(io)?;
    out.write_all(&json).map_err(io)?;
    for (_, heights) in &project.pages {
        let bytes: Vec<u8> = heights.iter().flat_map(|h| h.to_le_bytes()).collect();
        out.write_all(&bytes).map_err(io)?;
    }
    let hash = out.hash;
    out.inner.write_all(&hash.to_le_bytes()).map_err(io)?;
    Ok(())
}

/// Saves `project` to `path` atomically (temporary file in the same folder, fsync, rename): an
/// interrupted save leaves the previous file as it was.
pub fn save(path: &Path, project: &Project) -> Result<(), FileError> {
    check(project).map_err(|e| FileError::invalid(path, e))?;
    write_atomic(path, |w| {
        write_to(w, project).map_err(|e| FileError::invalid(path, e))
    })
}

/// Reads and checks a project file held in memory; errors without the file name.
pub fn parse(bytes: &[u8]) -> Result<Project, String> {
    if bytes.len() < 28 {
        return Err(format!(
            "{} bytes: too short for a project file",
            bytes.len()
        ));
    }
    if &bytes[..8] != MAGIC {
        return Err("not a Scarp project (bad magic)".into());
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if version != VERSION {
        return Err(format!(
            "project version {version}: this scarp reads version {VERSION}"
        ));
    }
    let header_len = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
    let body_end = bytes.len() - 8;
    if header_len > MAX_HEADER || 20 + header_len > body_end as u64 {
        return Err(format!(
            "header of {header_len} bytes does not fit the file ({} bytes)",
            bytes.len()
        ));
    }
    let stored = u64::from_le_bytes(bytes[body_end..].try_into().expect("8 bytes"));
    if fnv1a(&bytes[..body_end], FNV_OFFSET) != stored {
        return Err("corrupt: checksum mismatch (truncated or altered file)".into());
    }
    let header_end = 20 + header_len as usize;
    let de = &mut serde_json::Deserializer::from_slice(&bytes[20..header_end]);
    let header: Header = serde_path_to_error::deserialize(de)
        .map_err(|e| format!("header: {}: {}", e.path(), e.inner()))?;
    let document = header.document;
    document
        .validate()
        .map_err(|e| format!("header: document: {e}"))?;
    let mut at = header_end;
    let mut pages = Vec::with_capacity(header.pages.len());
    for [x, y] in header.pages {
        let id = PageId { x, y };
        if x >= document.pages_x() || y >= document.pages_y() {
            return Err(format!("page {x},{y} lies outside the document"));
        }
        let n = page_texels(&document, id);
        let len = n * 4;
        if body_end - at < len {
            return Err(format!("page {x},{y}: the file ends inside its heights"));
        }
        let heights: Vec<f32> = bytes[at..at + len]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        at += len;
        pages.push((id, heights));
    }
    if at != body_end {
        return Err(format!(
            "{} bytes after the last page's heights",
            body_end - at
        ));
    }
    let project = Project {
        document,
        flat: header.flat,
        pages,
        presets: header.presets,
        journal: header.journal,
    };
    check(&project)?;
    Ok(project)
}

/// Reads and checks the project at `path` (see the module docs); errors name the file.
pub fn load(path: &Path) -> Result<Project, FileError> {
    let meta = std::fs::metadata(path).map_err(FileError::io(path))?;
    if !meta.is_file() {
        return Err(FileError::invalid(path, "not a regular file"));
    }
    let bytes = std::fs::read(path).map_err(FileError::io(path))?;
    parse(&bytes).map_err(|e| FileError::invalid(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pages::geometry::HeightFormat;

    fn sample() -> Project {
        let document = DocumentDesc {
            width: 300,
            height: 200,
            format: HeightFormat::R32f,
            page_size: 128,
            height_min: 0.0,
            height_max: 1.0,
            units: Default::default(),
        };
        let page = |x, y| {
            let id = PageId { x, y };
            let n = page_texels(&document, id);
            (id, (0..n).map(|i| (i as f32 * 0.37).sin() * 50.0).collect())
        };
        Project {
            document,
            flat: 0.25,
            pages: vec![page(0, 0), page(2, 1)],
            presets: vec![(
                "hills".into(),
                serde_json::from_value(serde_json::json!({"type": "raise", "radius": 30})).unwrap(),
            )],
            journal: Some(
                JournalFile::of(&document, &crate::journal::Initial::Flat(0.25), &[]).unwrap(),
            ),
        }
    }

    #[test]
    fn saves_and_loads_back_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.scarp");
        let project = sample();
        save(&p, &project).unwrap();
        assert_eq!(load(&p).unwrap(), project);
    }

    #[test]
    fn hostile_project_files_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.scarp");
        save(&good, &sample()).unwrap();
        let bytes = std::fs::read(&good).unwrap();
        let n = bytes.len();
        let mut cases: Vec<(Vec<u8>, &str)> = vec![
            (bytes[..n / 2].to_vec(), "checksum mismatch"),
            (bytes[..10].to_vec(), "too short"),
            (b"not a project file at all, really".to_vec(), "bad magic"),
            (Vec::new(), "too short"),
        ];
        let mut flipped = bytes.clone();
        flipped[n - 100] ^= 0x40;
        cases.push((flipped, "checksum mismatch"));
        let mut future = bytes.clone();
        future[8] = 2;
        cases.push((future, "project version 2"));
        let mut huge = bytes.clone();
        huge[12..20].copy_from_slice(&(u64::MAX / 2).to_le_bytes());
        cases.push((huge, "does not fit the file"));
        for (i, (data, expect)) in cases.into_iter().enumerate() {
            let p = dir.path().join(format!("bad{i}.scarp"));
            std::fs::write(&p, &data).unwrap();
            let e = load(&p).unwrap_err().to_string();
            assert!(e.contains(&format!("bad{i}.scarp")), "{e}");
            assert!(e.contains(expect), "case {i}: {e}");
            assert_eq!(e.lines().count(), 1);
        }
        // Well-formed but lying: a page outside the document, re-checksummed.
        let mut p = sample();
        p.pages[1].0 = PageId { x: 9, y: 9 };
        let e = save(&dir.path().join("x.scarp"), &p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("outside the document"), "{e}");
        let mut nan = sample();
        nan.pages[0].1[7] = f32::NAN;
        std::fs::write(dir.path().join("keep.scarp"), b"previous").unwrap();
        let e = save(&dir.path().join("keep.scarp"), &nan)
            .unwrap_err()
            .to_string();
        assert!(e.contains("non-finite"), "{e}");
        assert_eq!(
            std::fs::read(dir.path().join("keep.scarp")).unwrap(),
            b"previous"
        );
    }
}

//! Version-2 `.scarp` projects: sparse, page-granular, saved incrementally.
//!
//! Only pages that are not flat are stored, each as the page images hold it (r32f: f32, r16:
//! u16, little-endian) with its CRC-32, so a 65536² document with a few touched pages is a small
//! file. Opening reads the header and the index only ([`open`]); pages are read when first
//! needed, and their checksum is checked then.
//!
//! Layout (little-endian):
//!
//! | offset | bytes | content |
//! |---|---|---|
//! | 0 | 8 | magic `SCARPPRJ` |
//! | 8 | 4 | version (2) |
//! | 12 | 4 | 0 |
//! | 16 | 48 | superblock slot 0 |
//! | 64 | 48 | superblock slot 1 |
//! | 112 | … | page records and indexes, appended |
//!
//! A superblock: `seq` u64, `index_offset` u64, `index_len` u64, `data_end` u64, `index_crc`
//! u32, 0 u32, then the CRC-32 of those 40 bytes and 4 zero bytes. The valid superblock with the
//! larger `seq` is the save; its index (JSON: `document`, `flat`, `presets`, `journal`, `pages`
//! as `[x, y, offset, len, crc]`, `coarse` as `[cx, cy, offset, len, crc]`) lies at
//! `index_offset`.
//!
//! **The coarse level** ([`crate::pages::coarse`]) is stored in chunks of [`CHUNK`]² coarse
//! texels (8192² document texels, 256 KiB; RGBA f32 per texel, row-major, the chunk cut at the
//! level's edge): every chunk holding a stored page is stored, the others are the flat height's.
//! Opening reads them (16 MiB for a painted 65536² document) instead of the pages; an
//! incremental save writes only the chunks whose texels changed. Files without them (the first
//! version-2 files) still open: the level is then made from the pages.
//!
//! **Saving incrementally** ([`save`] into the file it was opened from): pages whose bytes the
//! file already holds are listed again, changed pages and a new index are appended after
//! `data_end`, the file is synced, then the superblock slot not in use gets `seq + 1` and the file
//! is synced again. A crash before that write leaves the previous superblock, index and pages as
//! they were; a torn superblock fails its CRC and the other slot still names the previous save.
//! When dead records would outgrow the live ones, the save writes a whole new file instead (a
//! temporary file renamed over the project, as every other writer does).

use super::{Meta, MAGIC};
use crate::atomic_file::{write_atomic, FileError};
use crate::pages::coarse;
use crate::pages::disk::{DiskLoc, PageFile};
use crate::pages::geometry::{DocumentDesc, HeightFormat, PageId};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub const VERSION: u32 = 2;
/// Where page records start.
const DATA_START: u64 = 112;
const SUPERBLOCK: [u64; 2] = [16, 64];
const SUPERBLOCK_LEN: usize = 48;
/// Largest index read.
const MAX_INDEX: u64 = 256 << 20;
/// Coarse texels per stored chunk of the coarse level, per side.
pub const CHUNK: u32 = 128;
const COARSE_TEXEL: u64 = 16;

/// One save's root: where its index lies and how far its data reaches.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Superblock {
    seq: u64,
    index_offset: u64,
    index_len: u64,
    data_end: u64,
    index_crc: u32,
}

impl Superblock {
    fn to_bytes(self) -> [u8; SUPERBLOCK_LEN] {
        let mut b = [0u8; SUPERBLOCK_LEN];
        b[0..8].copy_from_slice(&self.seq.to_le_bytes());
        b[8..16].copy_from_slice(&self.index_offset.to_le_bytes());
        b[16..24].copy_from_slice(&self.index_len.to_le_bytes());
        b[24..32].copy_from_slice(&self.data_end.to_le_bytes());
        b[32..36].copy_from_slice(&self.index_crc.to_le_bytes());
        let crc = crc32fast::hash(&b[..40]);
        b[40..44].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// The superblock in `b`, if its CRC holds and it names a save.
    fn from_bytes(b: &[u8]) -> Option<Self> {
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        if crc32fast::hash(&b[..40]) != u32_at(40) || u64_at(0) == 0 {
            return None;
        }
        Some(Self {
            seq: u64_at(0),
            index_offset: u64_at(8),
            index_len: u64_at(16),
            data_end: u64_at(24),
            index_crc: u32_at(32),
        })
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Index {
    #[serde(flatten)]
    meta: Meta,
    /// `[x, y, offset, len, crc]` per stored page.
    pages: Vec<(u32, u32, u64, u64, u32)>,
    /// `[cx, cy, offset, len, crc]` per stored chunk of the coarse level.
    #[serde(default)]
    coarse: Vec<(u32, u32, u64, u64, u32)>,
    /// Further fields of the document (a layered document's layer fields; r32f pages), each
    /// with its flat value and pages as `pages` lists them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    fields: Vec<FieldIndex>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FieldIndex {
    name: String,
    flat: f32,
    pages: Vec<(u32, u32, u64, u64, u32)>,
}

/// A further field of a saved project: its name, flat value and stored pages (r32f).
#[derive(Clone)]
pub struct StoredField {
    pub name: String,
    pub flat: f32,
    pub pages: Vec<(PageId, DiskLoc)>,
}

/// A further field to save (r32f pages): its name, flat value and pages.
pub struct FieldToSave {
    pub name: String,
    pub flat: f32,
    pub pages: Vec<PageToSave>,
}

/// An opened (or just saved) version-2 project: what it holds and where, and the handle pages
/// are read through.
pub struct SparseProject {
    pub path: PathBuf,
    pub file: Arc<PageFile>,
    pub meta: Meta,
    /// The stored pages, in page order.
    pub pages: Vec<(PageId, DiskLoc)>,
    /// The stored chunks of the coarse level, in chunk order.
    pub coarse: Vec<([u32; 2], DiskLoc)>,
    /// Further fields (a layered document's layers), pages in page order.
    pub fields: Vec<StoredField>,
    /// What is wrong with a newer save than the one opened, if one is damaged (the file then
    /// opens at an older save: [`super::open`] refuses that unless told to accept it).
    pub damaged: Option<String>,
    superblock: Superblock,
    /// Which slot holds the superblock.
    slot: usize,
}

impl std::fmt::Debug for SparseProject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseProject")
            .field("path", &self.path)
            .field("pages", &self.pages.len())
            .field("superblock", &self.superblock)
            .finish()
    }
}

impl SparseProject {
    /// The number of the save this file was opened at (1 for a new file, +1 per save).
    pub fn save_number(&self) -> u64 {
        self.superblock.seq
    }

    /// What a recovery journal is tied to: this save's sequence number and index CRC.
    pub fn identity(&self) -> u64 {
        identity(&self.superblock)
    }

    /// The whole coarse level (row-major), read from the stored chunks (checksums checked) and
    /// the flat height; None when the document keeps none, the file lacks chunks or one cannot
    /// be read (the level is then made from the pages, which hold the same values). A damaged
    /// chunk is said in one line naming the file and the chunk.
    pub fn coarse_level(&self) -> Option<Vec<[f32; 4]>> {
        let d = &self.meta.document;
        let stored: std::collections::BTreeSet<[u32; 2]> =
            self.coarse.iter().map(|(c, _)| *c).collect();
        let needed = chunks_of(d, self.pages.iter().map(|(id, _)| *id));
        if !coarse::kept(d) || !needed.is_subset(&stored) {
            return None;
        }
        let mut level = coarse::flat_level(d, self.meta.flat);
        for (c, loc) in &self.coarse {
            let bytes = match loc.read(&format!("coarse chunk {},{}", c[0], c[1])) {
                Ok(bytes) => bytes,
                Err(e) => {
                    eprintln!(
                        "note: {}: {e}; the coarse level is made from the pages instead",
                        self.path.display()
                    );
                    return None;
                }
            };
            let texels: Vec<[f32; 4]> = bytes
                .chunks_exact(COARSE_TEXEL as usize)
                .map(bytemuck::pod_read_unaligned)
                .collect();
            let (origin, size) = chunk_area(d, *c);
            coarse::put_rect(&mut level, d, origin, size[0], &texels);
        }
        Some(level)
    }

    /// The heights of every stored page, read on the CPU (checksums checked), in page order.
    pub fn page_heights(&self) -> Result<Vec<(PageId, Vec<f32>)>, FileError> {
        self.pages
            .iter()
            .map(|(id, loc)| {
                let heights = read_page_heights(&self.path, &self.meta.document, *id, loc)?;
                Ok((*id, heights))
            })
            .collect()
    }
}

/// The stored bytes of page `id` at `loc` of the project at `path`, checksum checked; errors
/// name the file and the page.
pub fn read_page_bytes(path: &Path, id: PageId, loc: &DiskLoc) -> Result<Vec<u8>, FileError> {
    loc.read(&format!("page {},{}", id.x, id.y))
        .map_err(|e| FileError::invalid(path, e.to_string()))
}

/// The heights of page `id` of a document `d` stored at `loc` (see [`read_page_bytes`]).
pub fn read_page_heights(
    path: &Path,
    d: &DocumentDesc,
    id: PageId,
    loc: &DiskLoc,
) -> Result<Vec<f32>, FileError> {
    Ok(crate::pages::geometry::decode(
        d,
        &read_page_bytes(path, id, loc)?,
    ))
}

fn identity(sb: &Superblock) -> u64 {
    (sb.seq << 32) ^ u64::from(sb.index_crc)
}

/// Chunks of the coarse level holding the blocks of `pages` (a page lies in one chunk: page
/// sizes are powers of two up to 2048, a chunk spans 8192 texels).
fn chunks_of(
    d: &DocumentDesc,
    pages: impl Iterator<Item = PageId>,
) -> std::collections::BTreeSet<[u32; 2]> {
    let span = (CHUNK * coarse::FACTOR) as i32;
    pages
        .map(|id| {
            let r = d.page_rect(id);
            [(r.x0 / span) as u32, (r.y0 / span) as u32]
        })
        .collect()
}

/// First texel and size of chunk `c` of the coarse level of `d`.
fn chunk_area(d: &DocumentDesc, c: [u32; 2]) -> ([u32; 2], [u32; 2]) {
    let [w, h] = coarse::size_of(d);
    let o = [c[0] * CHUNK, c[1] * CHUNK];
    (o, [CHUNK.min(w - o[0]), CHUNK.min(h - o[1])])
}

/// Stored bytes of chunk `c`, or None when it lies outside the level.
fn chunk_len(d: &DocumentDesc, c: [u32; 2]) -> Option<u64> {
    let [w, h] = coarse::size_of(d);
    (c[0] < w.div_ceil(CHUNK) && c[1] < h.div_ceil(CHUNK)).then(|| {
        let (_, size) = chunk_area(d, c);
        u64::from(size[0]) * u64::from(size[1]) * COARSE_TEXEL
    })
}

/// The bytes of chunk `c` of the whole coarse `level` of `d`.
fn chunk_bytes(d: &DocumentDesc, level: &[[f32; 4]], c: [u32; 2]) -> Vec<u8> {
    let (origin, size) = chunk_area(d, c);
    bytemuck::cast_slice(&coarse::take_rect(level, d, origin, size)).to_vec()
}

/// What a save wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SaveReport {
    /// Pages the project holds.
    pub pages: usize,
    /// Pages whose bytes this save wrote.
    pub pages_written: usize,
    /// Chunks of the coarse level this save wrote.
    pub coarse_written: usize,
    /// Bytes this save wrote (pages, index and superblock; the header too for a whole file).
    pub bytes_written: u64,
    /// Whether the save appended to the file it was opened from.
    pub incremental: bool,
}

/// A page to save: where its unchanged bytes lie already, if anywhere.
pub struct PageToSave {
    pub id: PageId,
    pub saved: Option<DiskLoc>,
}

/// Reads the version and superblocks of `file`: the newest valid save.
fn read_superblock(path: &Path, file: &File) -> Result<(Superblock, usize), FileError> {
    read_superblocks(path, file).map(|(sb, slot, _)| (sb, slot))
}

/// The newest valid superblock, its slot, and what is wrong with the other slot when it looks
/// like a newer save that cannot be used (its record altered, or its data past the end of a
/// truncated file): opening the valid one would silently roll the project back to it.
fn read_superblocks(
    path: &Path,
    file: &File,
) -> Result<(Superblock, usize, Option<String>), FileError> {
    let len = file.metadata().map_err(FileError::io(path))?.len();
    if len < DATA_START {
        return Err(FileError::invalid(path, "too short for a project file"));
    }
    let mut head = [0u8; DATA_START as usize];
    file.read_exact_at(&mut head, 0)
        .map_err(FileError::io(path))?;
    if &head[..8] != MAGIC {
        return Err(FileError::invalid(path, "not a Scarp project (bad magic)"));
    }
    let version = u32::from_le_bytes(head[8..12].try_into().expect("4 bytes"));
    if version != VERSION {
        return Err(FileError::invalid(
            path,
            format!("project version {version}: expected {VERSION}"),
        ));
    }
    let best = SUPERBLOCK
        .iter()
        .enumerate()
        .filter_map(|(slot, &at)| {
            let at = at as usize;
            Superblock::from_bytes(&head[at..at + SUPERBLOCK_LEN]).map(|s| (s, slot))
        })
        .filter(|(s, _)| {
            s.data_end <= len
                && s.data_end >= DATA_START
                && s.index_offset >= DATA_START
                && s.index_offset
                    .checked_add(s.index_len)
                    .is_some_and(|e| e <= s.data_end)
        })
        .max_by_key(|(s, _)| s.seq);
    let (sb, slot) = best.ok_or_else(|| {
        FileError::invalid(
            path,
            "corrupt: no valid superblock (unfinished or altered file)",
        )
    })?;
    let at = SUPERBLOCK[1 - slot] as usize;
    let other = &head[at..at + SUPERBLOCK_LEN];
    let raw_seq = u64::from_le_bytes(other[..8].try_into().expect("8 bytes"));
    let damage = match Superblock::from_bytes(other) {
        // Never written, or the save before this one.
        _ if other.iter().all(|&b| b == 0) => None,
        Some(s) if s.seq < sb.seq => None,
        Some(s) => Some(format!(
            "the newest save (#{}) lies past the end of the file (truncated)",
            s.seq
        )),
        None if raw_seq != 0 && raw_seq < sb.seq => None,
        None => Some("the newest save's record is damaged (checksum mismatch)".to_string()),
    };
    Ok((sb, slot, damage))
}

/// Opens the project at `path`: its header, superblocks and index, every entry checked (pages
/// inside the document, once each, of the right length, inside the save's data); pages are not
/// read.
pub fn open(path: &Path) -> Result<SparseProject, FileError> {
    let file = File::open(path).map_err(FileError::io(path))?;
    let (sb, slot, damaged) = read_superblocks(path, &file)?;
    let bad = |p: String| FileError::invalid(path, p);
    if sb.index_len > MAX_INDEX {
        return Err(bad(format!("index of {} bytes is too large", sb.index_len)));
    }
    let mut index = vec![0u8; sb.index_len as usize];
    file.read_exact_at(&mut index, sb.index_offset)
        .map_err(FileError::io(path))?;
    if crc32fast::hash(&index) != sb.index_crc {
        return Err(bad("corrupt: index checksum mismatch".into()));
    }
    let de = &mut serde_json::Deserializer::from_slice(&index);
    let index: Index = serde_path_to_error::deserialize(de)
        .map_err(|e| bad(format!("index: {}: {}", e.path(), e.inner())))?;
    let d = index.meta.document;
    d.validate()
        .map_err(|e| bad(format!("index: document: {e}")))?;
    if !index.meta.flat.is_finite() {
        return Err(bad(format!(
            "flat height {} is not finite",
            index.meta.flat
        )));
    }
    let file = Arc::new(PageFile::from_file(path, file));
    let pages = located_checked(path, &d, d.texel_bytes(), &index.pages, &file, &sb, "")?;
    let mut fields: Vec<StoredField> = Vec::with_capacity(index.fields.len());
    for f in &index.fields {
        if f.name.is_empty() || fields.iter().any(|o| o.name == f.name) {
            return Err(bad(format!(
                "field {:?} is unnamed or listed twice",
                f.name
            )));
        }
        if !f.flat.is_finite() {
            return Err(bad(format!(
                "field {}: flat value {} is not finite",
                f.name, f.flat
            )));
        }
        let at = format!("field {}: ", f.name);
        fields.push(StoredField {
            name: f.name.clone(),
            flat: f.flat,
            pages: located_checked(path, &d, 4, &f.pages, &file, &sb, &at)?,
        });
    }
    let mut chunks = Vec::with_capacity(index.coarse.len());
    for &(cx, cy, offset, len, checksum) in &index.coarse {
        let c = [cx, cy];
        let Some(expected) = chunk_len(&d, c) else {
            return Err(bad(format!(
                "coarse chunk {cx},{cy} lies outside the level"
            )));
        };
        if chunks.iter().any(|(o, _)| *o == c) {
            return Err(bad(format!("coarse chunk {cx},{cy} is listed twice")));
        }
        if len != expected {
            return Err(bad(format!(
                "coarse chunk {cx},{cy} holds {len} bytes, {expected} expected"
            )));
        }
        if offset < DATA_START || offset.checked_add(len).map_or(true, |e| e > sb.data_end) {
            return Err(bad(format!(
                "coarse chunk {cx},{cy} lies outside the file's data"
            )));
        }
        let loc = DiskLoc {
            file: file.clone(),
            offset,
            len,
            checksum,
        };
        chunks.push((c, loc));
    }
    chunks.sort_by_key(|(c, _)| (c[1], c[0]));
    Ok(SparseProject {
        path: path.to_path_buf(),
        file,
        meta: index.meta,
        pages,
        coarse: chunks,
        fields,
        damaged,
        superblock: sb,
        slot,
    })
}

/// The pages an index lists for one field (`texel` bytes per texel), each checked: inside the
/// document, listed once, of the right length, inside the save's data; in page order.
fn located_checked(
    path: &Path,
    d: &DocumentDesc,
    texel: u64,
    listed: &[(u32, u32, u64, u64, u32)],
    file: &Arc<PageFile>,
    sb: &Superblock,
    at: &str,
) -> Result<Vec<(PageId, DiskLoc)>, FileError> {
    let bad = |p: String| FileError::invalid(path, format!("{at}{p}"));
    let mut seen = std::collections::BTreeSet::new();
    let mut pages = Vec::with_capacity(listed.len());
    for &(x, y, offset, len, checksum) in listed {
        let id = PageId { x, y };
        if x >= d.pages_x() || y >= d.pages_y() {
            return Err(bad(format!("page {x},{y} lies outside the document")));
        }
        if !seen.insert(id) {
            return Err(bad(format!("page {x},{y} is listed twice")));
        }
        let expected = d.page_rect(id).texels() * texel;
        if len != expected {
            return Err(bad(format!(
                "page {x},{y} holds {len} bytes, {expected} expected"
            )));
        }
        if offset < DATA_START || offset.checked_add(len).map_or(true, |e| e > sb.data_end) {
            return Err(bad(format!("page {x},{y} lies outside the file's data")));
        }
        pages.push((
            id,
            DiskLoc {
                file: file.clone(),
                offset,
                len,
                checksum,
            },
        ));
    }
    pages.sort_by_key(|(id, _)| (id.y, id.x));
    Ok(pages)
}

/// Stored bytes of page `id`.
fn page_len(d: &DocumentDesc, id: PageId) -> u64 {
    d.page_rect(id).texels() * d.texel_bytes()
}

/// Saves `pages` (the document's pages that are not flat, in page order) and the chunks of the
/// `coarse` level (the whole level, row-major, if the document keeps one) with `meta` to `path`.
/// `read` gives the bytes of a batch of pages. With `previous` the project this document was
/// opened from or last saved to, at the same path and unchanged on disk since, only pages whose
/// bytes it lacks are written (appended; see the module docs), unless the file would then hold
/// more dead bytes than live ones. `fail_after`, for tests, stops a save with an error after
/// that many pages, as a crash would.
#[allow(clippy::too_many_arguments)]
pub fn save(
    path: &Path,
    meta: &Meta,
    pages: &[PageToSave],
    extra: &[FieldToSave],
    coarse: Option<&[[f32; 4]]>,
    mut read: impl FnMut(usize, &[PageId]) -> Result<Vec<Vec<u8>>, String>,
    previous: Option<&SparseProject>,
    fail_after: Option<usize>,
) -> Result<(SparseProject, SaveReport), FileError> {
    meta.document
        .validate()
        .map_err(|e| FileError::invalid(path, format!("document: {e}")))?;
    let [w, h] = coarse::size_of(&meta.document);
    if coarse.is_some_and(|l| l.len() as u64 != u64::from(w) * u64::from(h)) {
        return Err(FileError::invalid(
            path,
            "the coarse level has the wrong size",
        ));
    }
    let mut sets = vec![pages];
    sets.extend(extra.iter().map(|f| f.pages.as_slice()));
    let to_write = Writing {
        meta,
        sets,
        extra,
        coarse,
        fail_after,
    };
    if let Some(theirs) = previous.and_then(|p| saved_since(p, path)) {
        let ours = previous.map_or(0, |p| p.superblock.seq);
        return Err(FileError::invalid(
            path,
            format!(
                "not saved: the file holds save #{theirs}, made by another writer since this \
                 document opened save #{ours}; save under another name"
            ),
        ));
    }
    let appendable = previous.filter(|p| p.path == path && still_current(p));
    if let Some(prev) = appendable {
        let d = &meta.document;
        let chunks = chunks_of(d, pages.iter().map(|p| p.id));
        // Chunks still listed count as kept (most are; a changed one is small).
        let kept_chunks: u64 = prev
            .coarse
            .iter()
            .filter(|(c, _)| coarse.is_some() && chunks.contains(c))
            .map(|(_, l)| l.len)
            .sum();
        let reused: u64 = to_write
            .all_pages()
            .filter_map(|(_, p)| p.saved.as_ref())
            .filter(|l| Arc::ptr_eq(&l.file, &prev.file))
            .map(|l| l.len)
            .sum::<u64>()
            + kept_chunks;
        let chunk_bytes: u64 = match coarse {
            Some(_) => chunks.iter().filter_map(|c| chunk_len(d, *c)).sum(),
            None => 0,
        };
        let total: u64 = to_write
            .all_pages()
            .map(|(set, p)| to_write.page_len(set, p.id))
            .sum::<u64>()
            + chunk_bytes;
        let new = total.saturating_sub(reused);
        let dead = prev.superblock.data_end - DATA_START - reused;
        if dead + new <= total.max(1 << 20) {
            return append(prev, &to_write, &mut read);
        }
    }
    whole(path, &to_write, &mut read)
}

/// What one save writes.
struct Writing<'a> {
    meta: &'a Meta,
    /// Pages per field: the document's (set 0), then `extra`'s in order.
    sets: Vec<&'a [PageToSave]>,
    extra: &'a [FieldToSave],
    coarse: Option<&'a [[f32; 4]]>,
    fail_after: Option<usize>,
}

impl Writing<'_> {
    /// Every page to save with its set.
    fn all_pages(&self) -> impl Iterator<Item = (usize, &PageToSave)> {
        self.sets
            .iter()
            .enumerate()
            .flat_map(|(set, pages)| pages.iter().map(move |p| (set, p)))
    }

    /// Stored bytes of page `id` of set `set` (further fields hold f32).
    fn page_len(&self, set: usize, id: PageId) -> u64 {
        let d = &self.meta.document;
        if set == 0 {
            page_len(d, id)
        } else {
            d.page_rect(id).texels() * 4
        }
    }

    fn page_count(&self) -> usize {
        self.sets.iter().map(|s| s.len()).sum()
    }
}

/// Per stored chunk of the coarse level: (chunk, offset, length, CRC-32) in the file written.
type ChunkPlacement = Vec<([u32; 2], u64, u64, u32)>;

/// Writes the chunks of the coarse level that hold stored pages through `put`; a chunk whose
/// bytes `previous` holds already keeps its place there.
fn write_chunks(
    w: &Writing,
    previous: Option<&SparseProject>,
    mut put: impl FnMut(&[u8]) -> Result<u64, FileError>,
) -> Result<(ChunkPlacement, usize), FileError> {
    let Some(level) = w.coarse else {
        return Ok((Vec::new(), 0));
    };
    let d = &w.meta.document;
    let (mut placed, mut written) = (Vec::new(), 0);
    for c in chunks_of(d, w.sets[0].iter().map(|p| p.id)) {
        let bytes = chunk_bytes(d, level, c);
        let crc = crc32fast::hash(&bytes);
        let kept = previous
            .and_then(|p| p.coarse.iter().find(|(o, l)| *o == c && l.checksum == crc))
            .filter(|(_, l)| l.read("coarse chunk").is_ok_and(|b| b == bytes));
        let offset = match kept {
            Some((_, l)) => l.offset,
            None => {
                written += 1;
                put(&bytes)?
            }
        };
        placed.push((c, offset, bytes.len() as u64, crc));
    }
    Ok((placed, written))
}

/// The number of a save made to `path` since `p` was read from it, by another writer (None
/// when `p` is another file's, or the file is gone or holds `p`'s save).
fn saved_since(p: &SparseProject, path: &Path) -> Option<u64> {
    if p.path != path {
        return None;
    }
    let file = File::open(path).ok()?;
    match read_superblock(path, &file) {
        Ok((sb, _)) if sb != p.superblock => Some(sb.seq),
        _ => None,
    }
}

/// Whether the file at `p.path` still holds the save `p` was read from.
fn still_current(p: &SparseProject) -> bool {
    let Ok(file) = File::open(&p.path) else {
        return false;
    };
    matches!(read_superblock(&p.path, &file), Ok((sb, _)) if sb == p.superblock)
}

/// Per page to save: (offset, length, CRC-32) in the file being written, filled as pages are
/// placed.
type Placement = Vec<Option<(u64, u64, u32)>>;

fn check_batch(
    path: &Path,
    w: &Writing,
    set: usize,
    ids: &[PageId],
    bytes: &[Vec<u8>],
) -> Result<(), FileError> {
    if bytes.len() != ids.len() {
        return Err(FileError::invalid(
            path,
            "the document gave the wrong number of pages",
        ));
    }
    for (id, b) in ids.iter().zip(bytes) {
        if b.len() as u64 != w.page_len(set, *id) {
            return Err(FileError::invalid(
                path,
                format!(
                    "page {},{}: {} bytes, {} expected",
                    id.x,
                    id.y,
                    b.len(),
                    w.page_len(set, *id)
                ),
            ));
        }
        let f32_texels = set > 0 || w.meta.document.format == HeightFormat::R32f;
        if f32_texels {
            let values = b
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]));
            if let Some((i, v)) = crate::terrain::formats::first_non_finite(values) {
                let extra = set.checked_sub(1).and_then(|i| w.extra.get(i));
                let field = extra.map(|f| f.name.as_str());
                let r = w.meta.document.page_rect(*id);
                let (x, y) = (r.x0 + i as i32 % r.width(), r.y0 + i as i32 / r.width());
                return Err(FileError::invalid(
                    path,
                    format!(
                        "not saved: {} holds a non-finite height ({v}) at texel ({x}, {y}); the previous save is intact",
                        field.unwrap_or("the document")
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Writes the pages that `reuse` does not hold, a batch at a time per set, through `put`
/// (which returns where the bytes went); pages `reuse` holds keep their place.
fn write_pages(
    path: &Path,
    w: &Writing,
    reuse: impl Fn(&DiskLoc) -> bool,
    read: &mut impl FnMut(usize, &[PageId]) -> Result<Vec<Vec<u8>>, String>,
    mut put: impl FnMut(&[u8]) -> Result<u64, FileError>,
) -> Result<(Vec<Placement>, usize), FileError> {
    let mut placements = Vec::with_capacity(w.sets.len());
    let mut written = 0;
    for (set, pages) in w.sets.iter().enumerate() {
        let mut placement: Placement = vec![None; pages.len()];
        let mut todo: Vec<usize> = Vec::new();
        for (i, p) in pages.iter().enumerate() {
            match &p.saved {
                Some(l) if reuse(l) => placement[i] = Some((l.offset, l.len, l.checksum)),
                // Bytes saved elsewhere (another project) are copied, checksum checked.
                _ => todo.push(i),
            }
        }
        for batch in todo.chunks(64) {
            let mut bytes = Vec::with_capacity(batch.len());
            let mut ask = Vec::new();
            for &i in batch {
                match &pages[i].saved {
                    Some(l) => bytes.push(Some(read_page_bytes(path, pages[i].id, l)?)),
                    None => {
                        bytes.push(None);
                        ask.push(pages[i].id);
                    }
                }
            }
            let mut asked = if ask.is_empty() {
                Vec::new()
            } else {
                let got = read(set, &ask).map_err(|e| FileError::invalid(path, e))?;
                check_batch(path, w, set, &ask, &got)?;
                got
            }
            .into_iter();
            for (&i, b) in batch.iter().zip(bytes) {
                let b = match b {
                    Some(b) => b,
                    None => asked.next().expect("one per asked page"),
                };
                if w.fail_after.is_some_and(|n| written >= n) {
                    return Err(FileError::invalid(
                        path,
                        "save interrupted (injected failure)",
                    ));
                }
                let offset = put(&b)?;
                placement[i] = Some((offset, b.len() as u64, crc32fast::hash(&b)));
                written += 1;
            }
        }
        placements.push(placement);
    }
    Ok((placements, written))
}

fn listed(pages: &[PageToSave], placement: &Placement) -> Vec<(u32, u32, u64, u64, u32)> {
    pages
        .iter()
        .zip(placement)
        .map(|(p, l)| {
            let (offset, len, crc) = l.expect("every page placed");
            (p.id.x, p.id.y, offset, len, crc)
        })
        .collect()
}

fn index_bytes(
    w: &Writing,
    placements: &[Placement],
    chunks: &ChunkPlacement,
) -> Result<Vec<u8>, String> {
    let index = Index {
        meta: w.meta.clone(),
        coarse: chunks
            .iter()
            .map(|&(c, o, l, crc)| (c[0], c[1], o, l, crc))
            .collect(),
        pages: listed(w.sets[0], &placements[0]),
        fields: w
            .extra
            .iter()
            .zip(&placements[1..])
            .map(|(f, p)| FieldIndex {
                name: f.name.clone(),
                flat: f.flat,
                pages: listed(&f.pages, p),
            })
            .collect(),
    };
    serde_json::to_vec(&index).map_err(|e| e.to_string())
}

/// An incremental save into `prev`'s file.
fn append(
    prev: &SparseProject,
    w: &Writing,
    read: &mut impl FnMut(usize, &[PageId]) -> Result<Vec<Vec<u8>>, String>,
) -> Result<(SparseProject, SaveReport), FileError> {
    let path = &prev.path;
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(FileError::io(path))?;
    // Records past the save's data are left from an interrupted save: nothing names them.
    file.set_len(prev.superblock.data_end)
        .map_err(FileError::io(path))?;
    let mut end = prev.superblock.data_end;
    let mut put = |b: &[u8]| {
        file.write_all_at(b, end).map_err(FileError::io(path))?;
        end += b.len() as u64;
        Ok(end - b.len() as u64)
    };
    let (placement, written) = write_pages(
        path,
        w,
        |l| Arc::ptr_eq(&l.file, &prev.file),
        read,
        &mut put,
    )?;
    let (chunks, chunks_written) = write_chunks(w, Some(prev), &mut put)?;
    let index = index_bytes(w, &placement, &chunks).map_err(|e| FileError::invalid(path, e))?;
    let index_offset = end;
    file.write_all_at(&index, index_offset)
        .map_err(FileError::io(path))?;
    end += index.len() as u64;
    file.sync_data().map_err(FileError::io(path))?;
    let sb = Superblock {
        seq: prev.superblock.seq + 1,
        index_offset,
        index_len: index.len() as u64,
        data_end: end,
        index_crc: crc32fast::hash(&index),
    };
    let slot = 1 - prev.slot;
    file.write_all_at(&sb.to_bytes(), SUPERBLOCK[slot])
        .map_err(FileError::io(path))?;
    file.sync_data().map_err(FileError::io(path))?;
    let bytes_written = end - prev.superblock.data_end + SUPERBLOCK_LEN as u64;
    let saved = SparseProject {
        path: path.clone(),
        file: prev.file.clone(),
        meta: w.meta.clone(),
        pages: located(w.sets[0], &placement[0], &prev.file),
        coarse: located_chunks(&chunks, &prev.file),
        fields: stored_fields(w, &placement, &prev.file),
        damaged: None,
        superblock: sb,
        slot,
    };
    let report = SaveReport {
        pages: w.page_count(),
        pages_written: written,
        coarse_written: chunks_written,
        bytes_written,
        incremental: true,
    };
    Ok((saved, report))
}

fn located(
    pages: &[PageToSave],
    placement: &Placement,
    file: &Arc<PageFile>,
) -> Vec<(PageId, DiskLoc)> {
    pages
        .iter()
        .zip(placement)
        .map(|(p, l)| {
            let (offset, len, checksum) = l.expect("every page placed");
            (
                p.id,
                DiskLoc {
                    file: file.clone(),
                    offset,
                    len,
                    checksum,
                },
            )
        })
        .collect()
}

fn stored_fields(w: &Writing, placements: &[Placement], file: &Arc<PageFile>) -> Vec<StoredField> {
    w.extra
        .iter()
        .zip(&placements[1..])
        .map(|(f, p)| StoredField {
            name: f.name.clone(),
            flat: f.flat,
            pages: located(&f.pages, p, file),
        })
        .collect()
}

fn located_chunks(chunks: &ChunkPlacement, file: &Arc<PageFile>) -> Vec<([u32; 2], DiskLoc)> {
    chunks
        .iter()
        .map(|&(c, offset, len, checksum)| {
            let loc = DiskLoc {
                file: file.clone(),
                offset,
                len,
                checksum,
            };
            (c, loc)
        })
        .collect()
}

/// A whole new file, written atomically.
fn whole(
    path: &Path,
    w: &Writing,
    read: &mut impl FnMut(usize, &[PageId]) -> Result<Vec<Vec<u8>>, String>,
) -> Result<(SparseProject, SaveReport), FileError> {
    let mut result = None;
    write_atomic(path, |out| {
        let io = FileError::io(path);
        let mut head = [0u8; DATA_START as usize];
        head[..8].copy_from_slice(MAGIC);
        head[8..12].copy_from_slice(&VERSION.to_le_bytes());
        out.write_all(&head).map_err(io)?;
        let mut end = DATA_START;
        let mut put = |b: &[u8]| {
            out.write_all(b).map_err(FileError::io(path))?;
            end += b.len() as u64;
            Ok(end - b.len() as u64)
        };
        let (placement, written) = write_pages(path, w, |_| false, read, &mut put)?;
        let (chunks, chunks_written) = write_chunks(w, None, &mut put)?;
        let index = index_bytes(w, &placement, &chunks).map_err(|e| FileError::invalid(path, e))?;
        out.write_all(&index).map_err(FileError::io(path))?;
        let sb = Superblock {
            seq: 1,
            index_offset: end,
            index_len: index.len() as u64,
            data_end: end + index.len() as u64,
            index_crc: crc32fast::hash(&index),
        };
        out.flush().map_err(FileError::io(path))?;
        out.get_ref()
            .write_all_at(&sb.to_bytes(), SUPERBLOCK[0])
            .map_err(FileError::io(path))?;
        result = Some((placement, written, chunks, chunks_written, sb));
        Ok::<(), FileError>(())
    })?;
    let (placement, written, chunks, chunks_written, sb) = result.expect("set by the body");
    let file = Arc::new(PageFile::open(path).map_err(FileError::io(path))?);
    let saved = SparseProject {
        path: path.to_path_buf(),
        file: file.clone(),
        meta: w.meta.clone(),
        pages: located(w.sets[0], &placement[0], &file),
        coarse: located_chunks(&chunks, &file),
        fields: stored_fields(w, &placement, &file),
        damaged: None,
        superblock: sb,
        slot: 0,
    };
    let report = SaveReport {
        pages: w.page_count(),
        pages_written: written,
        coarse_written: chunks_written,
        bytes_written: sb.data_end,
        incremental: false,
    };
    Ok((saved, report))
}

/// What a recovery journal of the project at `path` is tied to (see [`SparseProject::identity`]).
pub fn file_identity(path: &Path) -> Result<u64, FileError> {
    let file = crate::atomic_file::open_regular(path).map_err(FileError::io(path))?;
    Ok(identity(&read_superblock(path, &file)?.0))
}

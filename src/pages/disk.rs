//! Page bytes on disk: where a page version's texels lie in a file (a saved project, or the
//! spill file that holds pages past the host budget), read back with their checksum checked.
//!
//! A [`DiskLoc`] names a range of a [`PageFile`] and the CRC-32 of its bytes. Project files are
//! only read through it; the [`SpillFile`] is an unlinked temporary file (nothing is left behind
//! after a crash) whose freed ranges are reused by pages of the same size.

use super::error::{PageError, Result};
use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An open file that page bytes are read from (and, for a spill file, written to).
pub struct PageFile {
    path: PathBuf,
    file: File,
}

impl PageFile {
    /// Opens `path` for reading pages at offsets.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        Ok(Self {
            path: path.to_path_buf(),
            file: File::open(path)?,
        })
    }

    /// Reads pages of the open `file`, known as `path`.
    pub fn from_file(path: &Path, file: File) -> Self {
        Self {
            path: path.to_path_buf(),
            file,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Where one page version's bytes lie: `len` bytes of `file` from `offset`, whose CRC-32 is
/// `checksum`.
#[derive(Clone)]
pub struct DiskLoc {
    pub file: Arc<PageFile>,
    pub offset: u64,
    pub len: u64,
    pub checksum: u32,
}

impl DiskLoc {
    /// The bytes, checked against the checksum; errors name the file and the page. Reads at
    /// offsets share the open file, so any thread may read.
    pub fn read(&self, what: &str) -> Result<Vec<u8>> {
        let mut bytes = vec![0u8; self.len as usize];
        self.file
            .file
            .read_exact_at(&mut bytes, self.offset)
            .map_err(|e| PageError::Disk {
                path: self.file.path.clone(),
                problem: format!("{what}: {e}"),
            })?;
        if crc32fast::hash(&bytes) != self.checksum {
            return Err(PageError::Disk {
                path: self.file.path.clone(),
                problem: format!("{what}: checksum mismatch (the file was altered or truncated)"),
            });
        }
        Ok(bytes)
    }

    /// Whether two locations are the same bytes of the same open file.
    pub fn same(&self, other: &DiskLoc) -> bool {
        Arc::ptr_eq(&self.file, &other.file) && self.offset == other.offset
    }
}

/// The page file of pages past the host budget: an unlinked temporary file in a folder (next to
/// the project, or the system's temporary folder), whose freed ranges are reused.
pub struct SpillFile {
    file: Arc<PageFile>,
    end: u64,
    /// Free ranges by length.
    free: BTreeMap<u64, Vec<u64>>,
    used: u64,
}

impl SpillFile {
    /// A new, empty spill file in `dir`.
    pub fn create(dir: &Path) -> Result<Self> {
        let file = tempfile::tempfile_in(dir).map_err(|e| PageError::Disk {
            path: dir.to_path_buf(),
            problem: format!("cannot make a page file there: {e}"),
        })?;
        Ok(Self {
            file: Arc::new(PageFile {
                path: dir.join("(scarp page file)"),
                file,
            }),
            end: 0,
            free: BTreeMap::new(),
            used: 0,
        })
    }

    /// Writes `bytes` into a free range (or at the end) and returns where they lie.
    pub fn put(&mut self, bytes: &[u8]) -> Result<DiskLoc> {
        let len = bytes.len() as u64;
        let offset = match self.free.get_mut(&len).and_then(Vec::pop) {
            Some(at) => at,
            None => {
                let at = self.end;
                self.end += len;
                at
            }
        };
        self.file
            .file
            .write_all_at(bytes, offset)
            .map_err(|e| PageError::Disk {
                path: self.file.path.clone(),
                problem: format!("writing a page: {e}"),
            })?;
        self.used += len;
        Ok(DiskLoc {
            file: self.file.clone(),
            offset,
            len,
            checksum: crc32fast::hash(bytes),
        })
    }

    /// Gives back `loc`'s range if it lies in this file (other locations are left alone).
    pub fn release(&mut self, loc: &DiskLoc) {
        if Arc::ptr_eq(&loc.file, &self.file) {
            self.free.entry(loc.len).or_default().push(loc.offset);
            self.used -= loc.len;
        }
    }

    /// Bytes of pages the file holds now.
    pub fn used(&self) -> u64 {
        self.used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spilled_pages_read_back_and_freed_ranges_are_reused() {
        let dir = tempfile::tempdir().unwrap();
        let mut spill = SpillFile::create(dir.path()).unwrap();
        let a = spill.put(&[1u8; 100]).unwrap();
        let b = spill.put(&[2u8; 100]).unwrap();
        assert_eq!(a.read("a").unwrap(), vec![1u8; 100]);
        assert_eq!(b.read("b").unwrap(), vec![2u8; 100]);
        assert_eq!(spill.used(), 200);
        spill.release(&a);
        let c = spill.put(&[3u8; 100]).unwrap();
        assert_eq!(
            c.offset, a.offset,
            "a freed range of the same size is reused"
        );
        assert_eq!(c.read("c").unwrap(), vec![3u8; 100]);
        // The unlinked file leaves nothing in the folder.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        // A location whose checksum does not match its bytes is refused by name.
        let bad = DiskLoc {
            checksum: c.checksum ^ 1,
            ..c
        };
        let e = bad.read("page 3,4").unwrap_err().to_string();
        assert!(e.contains("page 3,4") && e.contains("checksum"), "{e}");
    }
}

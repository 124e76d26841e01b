//! Files written atomically: the data goes to a temporary file in the target's folder, is flushed
//! to disk (fsync), then renamed over the target, so a failure (full disk, killed process, bad
//! data) never leaves a partial file at the output path and an existing file stays as it was.
//! A leaf: it imports nothing from Scarp, and height files, projects, journals, bench reports and
//! screenshots all write through it.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// A temporary file next to `target`, removed on drop unless persisted.
struct TempFile {
    path: PathBuf,
    target: PathBuf,
    persisted: bool,
}

impl TempFile {
    fn create(target: &Path) -> Result<(Self, File), String> {
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !dir.is_dir() {
            return Err(format!(
                "{}: folder {} does not exist",
                target.display(),
                dir.display()
            ));
        }
        let name = target
            .file_name()
            .ok_or_else(|| format!("{}: not a file path", target.display()))?;
        if target.is_dir() {
            return Err(format!("{}: is a folder", target.display()));
        }
        let path = dir.join(format!(
            ".{}.tmp-{}",
            name.to_string_lossy(),
            std::process::id()
        ));
        let file =
            File::create(&path).map_err(|e| format!("{}: cannot write: {e}", target.display()))?;
        Ok((
            Self {
                path,
                target: target.to_path_buf(),
                persisted: false,
            },
            file,
        ))
    }

    fn persist(mut self, file: File) -> Result<(), String> {
        file.sync_all()
            .map_err(|e| format!("{}: {e}", self.target.display()))?;
        drop(file);
        std::fs::rename(&self.path, &self.target)
            .map_err(|e| format!("{}: {e}", self.target.display()))?;
        self.persisted = true;
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.persisted {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Fails early if a file can't be created at `path` (missing folder, no permission), whatever
/// its extension.
pub fn check_folder(path: &Path) -> Result<(), String> {
    let (temp, file) = TempFile::create(path)?;
    drop(file);
    drop(temp);
    Ok(())
}

/// Writes `write_body` to `path` atomically.
pub fn write_atomic(
    path: &Path,
    write_body: impl FnOnce(&mut BufWriter<&File>) -> Result<(), String>,
) -> Result<(), String> {
    let (temp, file) = TempFile::create(path)?;
    {
        let mut w = BufWriter::with_capacity(1 << 20, &file);
        write_body(&mut w)?;
        w.flush().map_err(|e| format!("{}: {e}", path.display()))?;
    }
    temp.persist(file)
}

/// Writes `bytes` to `path` atomically; errors name the path.
pub fn write_bytes_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    write_atomic(path, |w| {
        w.write_all(bytes)
            .map_err(|e| format!("{}: {e}", path.display()))
    })
}

/// Writes an RGBA8 image as PNG, atomically.
pub fn write_rgba_png(path: &Path, width: u32, height: u32, rgba: Vec<u8>) -> Result<(), String> {
    let img = image::RgbaImage::from_raw(width, height, rgba)
        .ok_or_else(|| format!("{}: size mismatch", path.display()))?;
    write_atomic(path, |w| {
        img.write_to(w, image::ImageFormat::Png)
            .map_err(|e| format!("{}: {e}", path.display()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_write_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.r32");
        let err = write_atomic(&path, |_| Err("simulated failure".into())).unwrap_err();
        assert_eq!(err, "simulated failure");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_write_replaces_the_whole_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.txt");
        write_bytes_atomic(&path, b"a longer first version").unwrap();
        write_bytes_atomic(&path, b"short").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"short");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let missing = dir.path().join("no/such/folder/x.txt");
        assert!(check_folder(&missing)
            .unwrap_err()
            .contains("does not exist"));
    }
}

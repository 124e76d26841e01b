//! Files written atomically: the data goes to a temporary file in the target's folder, is flushed
//! to disk (fsync), then renamed over the target, so a failure (full disk, killed process, bad
//! data) never leaves a partial file at the output path and an existing file stays as it was.
//! A leaf: it imports nothing from Scarp, and height files, projects, journals, bench reports and
//! screenshots all write through it.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// A file that could not be read or written. Every message starts with the file's path.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The file system refused: opening, reading, writing, syncing, renaming.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file, its contents or the request for it are wrong (an unknown format, a missing
    /// folder, a size over the limits, non-finite heights, a bad checksum): what, in words.
    #[error("{}: {problem}", path.display())]
    Invalid { path: PathBuf, problem: String },
}

/// Opens `path` for reading if it is a regular file. The open never blocks (`O_NONBLOCK`: a
/// FIFO does not wait for a writer, a device is not read) and the type is checked on the open
/// file, so a pipe, a device or a folder is an error (`InvalidInput`, "not a regular file")
/// rather than a hang or an endless read. Every reader of a file the user names goes through
/// this (height files, tiles, stamps, journals, recovery files, projects, looks, reports).
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a pipe, a device or a folder)",
        ));
    }
    Ok(file)
}

/// The text of the regular file at `path` (see [`open_regular`]).
pub fn read_regular_to_string(path: &Path) -> std::io::Result<String> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut open_regular(path)?, &mut text)?;
    Ok(text)
}

/// The bytes of the regular file at `path` (see [`open_regular`]).
pub fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut open_regular(path)?, &mut bytes)?;
    Ok(bytes)
}

impl FileError {
    /// An I/O error of the file at `path`.
    pub fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Self + '_ {
        move |source| Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// What is wrong with the file at `path`.
    pub fn invalid(path: &Path, problem: impl Into<String>) -> Self {
        Self::Invalid {
            path: path.to_path_buf(),
            problem: problem.into(),
        }
    }
}

/// For callers whose own errors are still words (the text is the same).
impl From<FileError> for String {
    fn from(e: FileError) -> Self {
        e.to_string()
    }
}

/// A temporary file next to `target`, removed on drop unless persisted.
struct TempFile {
    path: PathBuf,
    target: PathBuf,
    persisted: bool,
}

impl TempFile {
    fn create(target: &Path) -> Result<(Self, File), FileError> {
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !dir.is_dir() {
            return Err(FileError::invalid(
                target,
                format!("folder {} does not exist", dir.display()),
            ));
        }
        let name = target
            .file_name()
            .ok_or_else(|| FileError::invalid(target, "not a file path"))?;
        if target.is_dir() {
            return Err(FileError::invalid(target, "is a folder"));
        }
        let path = dir.join(format!(
            ".{}.tmp-{}",
            name.to_string_lossy(),
            std::process::id()
        ));
        let file = File::create(&path)
            .map_err(|e| FileError::invalid(target, format!("cannot write: {e}")))?;
        Ok((
            Self {
                path,
                target: target.to_path_buf(),
                persisted: false,
            },
            file,
        ))
    }

    fn persist(mut self, file: File) -> Result<(), FileError> {
        file.sync_all().map_err(FileError::io(&self.target))?;
        drop(file);
        std::fs::rename(&self.path, &self.target).map_err(FileError::io(&self.target))?;
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
pub fn check_folder(path: &Path) -> Result<(), FileError> {
    let (temp, file) = TempFile::create(path)?;
    drop(file);
    drop(temp);
    Ok(())
}

/// Writes `write_body` to `path` atomically. The body's errors are the caller's own type, which
/// takes this module's errors too.
pub fn write_atomic<E: From<FileError>>(
    path: &Path,
    write_body: impl FnOnce(&mut BufWriter<&File>) -> Result<(), E>,
) -> Result<(), E> {
    let (temp, file) = TempFile::create(path)?;
    {
        let mut w = BufWriter::with_capacity(1 << 20, &file);
        write_body(&mut w)?;
        w.flush().map_err(FileError::io(path))?;
    }
    Ok(temp.persist(file)?)
}

/// Writes `bytes` to `path` atomically.
pub fn write_bytes_atomic(path: &Path, bytes: &[u8]) -> Result<(), FileError> {
    write_atomic(path, |w| w.write_all(bytes).map_err(FileError::io(path)))
}

/// Writes an RGBA8 image as PNG, atomically.
pub fn write_rgba_png(
    path: &Path,
    width: u32,
    height: u32,
    rgba: Vec<u8>,
) -> Result<(), FileError> {
    let img = image::RgbaImage::from_raw(width, height, rgba)
        .ok_or_else(|| FileError::invalid(path, "size mismatch"))?;
    write_atomic(path, |w| {
        img.write_to(w, image::ImageFormat::Png)
            .map_err(|e| FileError::invalid(path, e.to_string()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_write_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.r32");
        let err =
            write_atomic(&path, |_| Err::<(), String>("simulated failure".into())).unwrap_err();
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
            .to_string()
            .contains("does not exist"));
    }
}

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
    /// A project whose newest save is damaged, refused rather than opened at the older save it
    /// still holds: `older` says what is wrong and which save is intact ("the newest save's
    /// record is damaged (checksum mismatch); the older save #11").
    #[error(
        "{}: {older} is intact: open it with --accept-older (what the damaged save added is lost)",
        path.display()
    )]
    OlderSaveOnly { path: PathBuf, older: String },
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

/// Whether process `pid` runs now: this one, or a process whose /proc entry says it leads its
/// thread group. A thread's id has a /proc entry too, and ids are reused: a dead editor's pid
/// taken by another process's thread (lavapipe starts many) is not that editor running.
/// Elsewhere than Linux every other process is taken as gone.
pub fn process_running(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|t| t.trim().parse::<u32>().ok())
        == Some(pid)
}

/// Removes the temporary files `{prefix}PID` in `dir` of processes that are no longer running
/// (a write killed part way: a crash, a kill -9). Only ours: our naming, a pid with no process.
fn remove_stale(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !process_running(pid) {
            let _ = std::fs::remove_file(entry.path());
        }
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
        let prefix = format!(".{}.tmp-", name.to_string_lossy());
        remove_stale(&dir, &prefix);
        let path = dir.join(format!("{prefix}{}", std::process::id()));
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

/// Writes an RGBA8 PNG of `width` x `height` atomically, made in bands of `band_rows` rows so
/// that a big image is never whole in memory: `band(first_row)` returns the band's pixels,
/// rows top first, at least as many rows as are left (rows past the image are ignored).
pub fn write_rgba_png_in_bands<E: From<FileError>>(
    path: &Path,
    width: u32,
    height: u32,
    band_rows: u32,
    mut band: impl FnMut(u32) -> Result<Vec<u8>, E>,
) -> Result<(), E> {
    let png_error = |e: png::EncodingError| E::from(FileError::invalid(path, e.to_string()));
    write_atomic(path, |w| -> Result<(), E> {
        let mut encoder = png::Encoder::new(w, width, height);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(png_error)?;
        let mut rows = writer.stream_writer().map_err(png_error)?;
        let row_bytes = width as usize * 4;
        let mut y = 0;
        while y < height {
            let n = band_rows.max(1).min(height - y);
            let pixels = band(y)?;
            let want = n as usize * row_bytes;
            if pixels.len() < want {
                return Err(FileError::invalid(path, "a band is shorter than its rows").into());
            }
            rows.write_all(&pixels[..want])
                .map_err(|e| E::from(FileError::io(path)(e)))?;
            y += n;
        }
        rows.finish().map_err(png_error)?;
        writer.finish().map_err(png_error)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PNG written in bands (the last one short) decodes to the pixels written whole.
    #[test]
    fn a_png_written_in_bands_holds_the_same_pixels() {
        let (w, h) = (37u32, 23u32);
        let pixels: Vec<u8> = (0..w * h * 4).map(|i| (i * 7 % 251) as u8).collect();
        let dir = std::env::temp_dir().join(format!("scarp-bands-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (whole, banded) = (dir.join("whole.png"), dir.join("banded.png"));
        write_rgba_png(&whole, w, h, pixels.clone()).unwrap();
        let mut asked = Vec::new();
        write_rgba_png_in_bands::<FileError>(&banded, w, h, 5, |y| {
            asked.push(y);
            // A full band, past the image's end for the last one.
            let mut band = vec![0xAB; 5 * w as usize * 4];
            let end = (pixels.len()).min((y as usize + 5) * w as usize * 4);
            let got = &pixels[y as usize * w as usize * 4..end];
            band[..got.len()].copy_from_slice(got);
            Ok(band)
        })
        .unwrap();
        assert_eq!(asked, [0, 5, 10, 15, 20]);
        let read = |p: &Path| image::open(p).unwrap().to_rgba8().into_raw();
        assert_eq!(read(&banded), read(&whole));
        assert_eq!(read(&banded), pixels);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A thread's id is not a running process (its /proc entry exists, its thread group is
    /// another's); this process and its parent run; an id past pid_max does not.
    #[test]
    fn a_threads_id_is_not_a_running_process() {
        let (id_tx, id_rx) = std::sync::mpsc::channel();
        let (end_tx, end_rx) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let link = std::fs::read_link("/proc/thread-self").unwrap();
            let tid: u32 = link.file_name().unwrap().to_str().unwrap().parse().unwrap();
            id_tx.send(tid).unwrap();
            end_rx.recv().unwrap();
        });
        // While the thread lives, its /proc entry exists.
        let tid = id_rx.recv().unwrap();
        assert_ne!(tid, std::process::id());
        assert!(Path::new(&format!("/proc/{tid}")).exists());
        assert!(!process_running(tid), "thread {tid} taken for a process");
        end_tx.send(()).unwrap();
        thread.join().unwrap();
        assert!(process_running(std::process::id()));
        assert!(process_running(std::os::unix::process::parent_id()));
        assert!(!process_running(u32::MAX));
    }

    #[test]
    fn failed_write_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.r32");
        let err =
            write_atomic(&path, |_| Err::<(), String>("simulated failure".into())).unwrap_err();
        assert_eq!(err, "simulated failure");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// A temporary file left by a killed write of the same file is removed by the next write;
    /// a live process's, another file's and a name not ours are left alone.
    #[test]
    fn a_write_removes_the_temporaries_of_dead_processes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.scarp");
        let dead = (4_000_000..)
            .find(|p| !Path::new(&format!("/proc/{p}")).exists())
            .unwrap();
        let keep = [
            format!(".s.scarp.tmp-{}", 1), // init: running
            format!(".t.scarp.tmp-{dead}"),
            ".s.scarp.tmp-notapid".to_string(),
        ];
        let stale = dir.path().join(format!(".s.scarp.tmp-{dead}"));
        std::fs::write(&stale, b"half a save").unwrap();
        for k in &keep {
            std::fs::write(dir.path().join(k), b"x").unwrap();
        }
        write_bytes_atomic(&path, b"saved").unwrap();
        assert!(!stale.exists(), "the dead process's temporary is removed");
        for k in &keep {
            assert!(dir.path().join(k).exists(), "{k} kept");
        }
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

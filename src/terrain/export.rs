//! Writing height grids. Every write is atomic: the data goes to a temporary file in the target's
//! folder, is flushed to disk, then renamed over the target, so a failure (full disk, killed
//! process, bad data) never leaves a partial file at the output path.
//!
//! Height formats are in [`super::formats`]; `write_heights` maps integer formats over the grid's
//! min..max (`.png` 16-bit gray: min → 0, max → 65535).

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

/// Fails early, before any work, if `path` can't be written (unknown format, missing folder,
/// no permission).
pub fn check_writable(path: &Path) -> Result<super::formats::FileKind, String> {
    let format = super::formats::FileKind::of(path)?;
    check_folder(path)?;
    Ok(format)
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

/// Min and max of `heights` (ignoring NaN); (0, 0) for an empty or all-NaN grid.
pub fn min_max(heights: &[f32]) -> (f32, f32) {
    let (lo, hi) = heights
        .iter()
        .filter(|h| !h.is_nan())
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &h| {
            (lo.min(h), hi.max(h))
        });
    if lo > hi {
        (0.0, 0.0)
    } else {
        (lo, hi)
    }
}

/// Writes a `width` x `height` grid to `path` in the format its extension names
/// ([`super::formats`]); integer formats map the grid's min..max onto their full range.
pub fn write_heights(path: &Path, width: u32, height: u32, heights: &[f32]) -> Result<(), String> {
    if heights.len() != width as usize * height as usize {
        return Err(format!(
            "{}: {} heights do not make a {width}x{height} grid",
            path.display(),
            heights.len()
        ));
    }
    let grid = super::formats::Heights {
        width,
        height,
        values: heights.to_vec(),
    };
    super::formats::write(path, &grid, &Default::default()).map(|_| ())
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
    fn r32_is_raw_little_endian_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.r32");
        write_heights(&path, 2, 2, &[1.0, -2.0, 3.5, 0.25]).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let back: Vec<f32> = bytes
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(back, [1.0, -2.0, 3.5, 0.25]);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary file left behind"
        );
    }

    #[test]
    fn failed_write_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.r32");
        let err = write_atomic(&path, |_| Err("simulated failure".into())).unwrap_err();
        assert_eq!(err, "simulated failure");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn png_normalizes_min_to_0_and_max_to_65535() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("n.png");
        write_heights(&p, 3, 1, &[-1.0, 0.0, 1.0]).unwrap();
        let img = image::open(&p).unwrap().to_luma16();
        assert_eq!(img.into_raw(), [0, 32768, 65535]);
        write_heights(&p, 2, 1, &[5.0, 5.0]).unwrap();
        assert_eq!(image::open(&p).unwrap().to_luma16().into_raw(), [0, 0]);
    }
}

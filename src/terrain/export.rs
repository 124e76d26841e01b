//! Writing height grids in the format their extension names ([`super::formats`]), atomically
//! ([`crate::atomic_file`]); integer formats map the grid's min..max onto their full range
//! (`.png` 16-bit gray: min → 0, max → 65535).

use crate::atomic_file::{check_folder, FileError};
use std::path::Path;

/// Fails early, before any work, if `path` can't be written (unknown format, missing folder,
/// no permission).
pub fn check_writable(path: &Path) -> Result<super::formats::FileKind, FileError> {
    let format = super::formats::FileKind::of(path)?;
    if format == super::formats::FileKind::Hgt {
        return Err(FileError::invalid(path, super::formats::HGT_NOT_WRITTEN));
    }
    check_folder(path)?;
    Ok(format)
}

/// Writes a `width` x `height` grid to `path` in the format its extension names
/// ([`super::formats`]); integer formats map the grid's min..max onto their full range.
pub fn write_heights(
    path: &Path,
    width: u32,
    height: u32,
    heights: &[f32],
) -> Result<(), FileError> {
    if heights.len() != width as usize * height as usize {
        return Err(FileError::invalid(
            path,
            format!(
                "{} heights do not make a {width}x{height} grid",
                heights.len()
            ),
        ));
    }
    let grid = super::formats::Heights {
        width,
        height,
        values: heights.to_vec(),
    };
    super::formats::write(path, &grid, &Default::default()).map(|_| ())
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

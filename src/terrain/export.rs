//! Writing height grids in the format their extension names ([`super::formats`]), atomically
//! ([`crate::atomic_file`]); integer formats map the grid's min..max onto their full range
//! (`.png` 16-bit gray: min → 0, max → 65535).

use crate::atomic_file::{check_folder, FileError};
use std::path::Path;

/// Most samples in one generated grid (1 GiB of f32).
pub const MAX_SAMPLES: u64 = 1 << 28;

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

/// Writes every part of a multi-file export with `write` (called with each file and its region,
/// in order); if one fails, the files this export already wrote are removed (with their
/// sidecars), so a failed export (a full disk part way) leaves no partial set behind. Returns
/// the first error.
pub fn write_all<E>(
    parts: &[(std::path::PathBuf, crate::pages::geometry::Region)],
    mut write: impl FnMut(&Path, crate::pages::geometry::Region) -> Result<(), E>,
) -> Result<(), E> {
    for (i, (out, region)) in parts.iter().enumerate() {
        if let Err(e) = write(out, *region) {
            for (done, _) in &parts[..i] {
                let _ = std::fs::remove_file(done);
                let _ = std::fs::remove_file(super::sidecar::path_of(done));
            }
            return Err(e);
        }
    }
    Ok(())
}

/// The files an export of `area` to `out` writes and the region each holds: `out` alone, or with
/// `tiles` (columns, rows) edge-sharing tiles `OUT_x{i}_y{j}.ext`. Errors (one line) when the
/// tiles do not divide the area or a file would be past [`MAX_SAMPLES`]
/// texels.
pub fn parts(
    out: &Path,
    area: crate::pages::geometry::Region,
    tiles: Option<(u32, u32)>,
) -> Result<Vec<(std::path::PathBuf, crate::pages::geometry::Region)>, String> {
    use super::tiles;
    let parts: Vec<(std::path::PathBuf, crate::pages::geometry::Region)> = match tiles {
        Some((cols, rows)) => tiles::tile_regions(area, cols, rows)
            .map_err(|e| format!("tiles: {e}"))?
            .into_iter()
            .map(|(i, j, r)| (tiles::tile_path(out, i, j), r))
            .collect(),
        None => vec![(out.to_path_buf(), area)],
    };
    let most = MAX_SAMPLES;
    if let Some((_, r)) = parts
        .iter()
        .find(|(_, r)| u64::from(r.width) * u64::from(r.height) > most)
    {
        return Err(format!(
            "{}x{} is too large to write as one file (at most {most} texels): split it \
             into tiles (--tiles CxR; the editor's export: tiles) or crop a region",
            r.width, r.height
        ));
    }
    Ok(parts)
}

/// Writes `grid`, the part of document `doc` from texel `at`, to `path` (its georeference in a
/// GeoTIFF's tags) with its sidecar (`path.json`, [`super::sidecar`]). A sidecar that cannot be
/// written takes the file with it.
pub fn write_with_sidecar(
    path: &Path,
    grid: &super::formats::Heights,
    doc: &crate::pages::DocumentDesc,
    at: (u32, u32),
    options: &super::formats::WriteOptions,
    progress: super::formats::Progress<'_>,
) -> Result<super::formats::WriteReport, FileError> {
    let options = super::formats::WriteOptions {
        geo: doc.units.geo.map(|g| g.from_texel(at.0, at.1)),
        ..*options
    };
    let report = super::formats::write_with_progress(path, grid, &options, progress)?;
    let sidecar = super::sidecar::Sidecar::of(path, grid, doc, at, &report);
    if let Err(e) = sidecar.write_beside(path) {
        let _ = std::fs::remove_file(path);
        return Err(e);
    }
    Ok(report)
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
    fn a_failed_export_removes_the_sidecars_it_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let area = crate::pages::geometry::Region {
            x: 0,
            y: 0,
            width: 9,
            height: 9,
        };
        let doc = crate::pages::DocumentDesc::for_heights(9, 9);
        let options = Default::default();
        let flat = |r: crate::pages::geometry::Region| crate::terrain::formats::Heights {
            width: r.width,
            height: r.height,
            values: vec![0.5; (r.width * r.height) as usize],
        };
        let parts = parts(&dir.path().join("t.r32"), area, Some((2, 2))).unwrap();
        let r = write_all(&parts, |out, r| {
            if out.ends_with("t_x0_y1.r32") {
                return Err("disk full".to_string());
            }
            write_with_sidecar(out, &flat(r), &doc, (r.x, r.y), &options, &mut |_, _| {})
                .map(|_| ())
                .map_err(|e| e.to_string())
        });
        assert_eq!(r, Err("disk full".to_string()));
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
        // Written whole, each part has its sidecar.
        write_all(&parts[..2], |out, r| {
            write_with_sidecar(out, &flat(r), &doc, (r.x, r.y), &options, &mut |_, _| {})
                .map(|_| ())
        })
        .unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 4);
        assert!(super::super::sidecar::path_of(&parts[1].0).exists());
    }

    #[test]
    fn a_failed_export_removes_the_files_it_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let area = crate::pages::geometry::Region {
            x: 0,
            y: 0,
            width: 9,
            height: 9,
        };
        let parts = parts(&dir.path().join("t.r32"), area, Some((2, 2))).unwrap();
        let r = write_all(&parts, |out, _| {
            if out.ends_with("t_x0_y1.r32") {
                return Err("disk full".to_string());
            }
            std::fs::write(out, b"tile").map_err(|e| e.to_string())
        });
        assert_eq!(r, Err("disk full".to_string()));
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "nothing left"
        );
        write_all(&parts, |out, _| {
            std::fs::write(out, b"tile").map_err(|e| e.to_string())
        })
        .unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 4);
    }

    #[test]
    fn an_export_is_one_file_or_edge_sharing_tiles_none_past_the_limit() {
        use crate::pages::geometry::Region;
        let area = Region {
            x: 10,
            y: 20,
            width: 9,
            height: 5,
        };
        let one = parts(Path::new("out/h.png"), area, None).unwrap();
        assert_eq!(one, [(Path::new("out/h.png").to_path_buf(), area)]);
        let four = parts(Path::new("out/h.png"), area, Some((2, 2))).unwrap();
        let names: Vec<String> = four.iter().map(|(p, _)| p.display().to_string()).collect();
        assert_eq!(
            names,
            [
                "out/h_x0_y0.png",
                "out/h_x1_y0.png",
                "out/h_x0_y1.png",
                "out/h_x1_y1.png"
            ]
        );
        // Tiles share their edge texels.
        assert_eq!((four[1].1.x, four[1].1.width), (14, 5));
        assert_eq!((four[2].1.y, four[2].1.height), (22, 3));
        assert!(parts(Path::new("h.png"), area, Some((3, 1)))
            .unwrap_err()
            .starts_with("tiles:"));
        let huge = Region {
            x: 0,
            y: 0,
            width: 16385,
            height: 16385,
        };
        let e = parts(Path::new("h.png"), huge, None).unwrap_err();
        assert!(e.contains("too large to write as one file"), "{e}");
        assert_eq!(
            parts(Path::new("h.png"), huge, Some((4, 4))).unwrap().len(),
            16
        );
    }

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

//! Regions and tile sets of height grids, as engines split large terrains.
//!
//! * **Region**: a crop `X,Y,W,H` (texels; x = column, y = row, from the top-left).
//! * **Tiles**: a grid of C x R tiles that **share their edge texels**, the convention of Unreal's
//!   tiled landscape import (World Partition) and of World Machine's tiled output: tile (i, j)
//!   covers columns `i·(tw − 1) .. i·(tw − 1) + tw` and rows `j·(th − 1) .. j·(th − 1) + th`, so
//!   the texels on a common edge appear in both tiles and the whole is `C·(tw − 1) + 1` wide. A
//!   W x H grid splits into C x R tiles only when `(W − 1)` is a multiple of C and `(H − 1)` of R
//!   (e.g. 4033² into 4 x 4 tiles of 1009²); the error names the sizes that would.
//! * **Names**: tile (i, j) of `OUT.ext` is `OUT_x{i}_y{j}.ext` (i: column, j: row, from 0), and a
//!   tile set is read from a pattern holding the literal `{i}` and `{j}`
//!   (`'terrain_x{i}_y{j}.png'`).
//!
//! Stitching takes each shared texel from the tile that covers it first (row-major tile order) and
//! counts the shared texels whose tiles disagree, so edits made tile by tile are reported, not
//! hidden.

use super::formats::{Heights, ReadOptions};
use crate::pages::geometry::{check_region, Region};
use std::path::{Path, PathBuf};

/// The `region` of `grid`.
pub fn crop(grid: &Heights, region: Region) -> Result<Heights, String> {
    let Region {
        x,
        y,
        width,
        height,
    } = region;
    check_region(grid.width, grid.height, region)?;
    let mut values = Vec::with_capacity(width as usize * height as usize);
    for row in y..y + height {
        let start = row as usize * grid.width as usize + x as usize;
        values.extend_from_slice(&grid.values[start..start + width as usize]);
    }
    Ok(Heights {
        width,
        height,
        values,
    })
}

/// The side of each of `count` edge-sharing tiles along a side of `side` texels.
pub fn tile_side(side: u32, count: u32, axis: &str) -> Result<u32, String> {
    if count == 0 || side < 2 || (side - 1) % count != 0 || (side - 1) / count == 0 {
        let near = |c: u32| ((side.saturating_sub(1)) / c.max(1)) * c.max(1) + 1;
        return Err(format!(
            "{side} texels ({axis}) do not split into {count} tiles that share their edges: \
             ({side} - 1) must be a multiple of {count} (e.g. {} or {})",
            near(count),
            near(count) + count
        ));
    }
    Ok((side - 1) / count + 1)
}

/// The path of tile (i, j) of `output` (`OUT.ext` → `OUT_x{i}_y{j}.ext`).
pub fn tile_path(output: &Path, i: u32, j: u32) -> PathBuf {
    let stem = output.file_stem().unwrap_or_default().to_string_lossy();
    let name = match output.extension() {
        Some(ext) => format!("{stem}_x{i}_y{j}.{}", ext.to_string_lossy()),
        None => format!("{stem}_x{i}_y{j}"),
    };
    output.with_file_name(name)
}

/// Whether `path` is a tile-set pattern (holds `{i}` and `{j}`).
pub fn is_pattern(path: &Path) -> bool {
    let s = path.to_string_lossy();
    s.contains("{i}") && s.contains("{j}")
}

/// The path of tile (i, j) of a pattern holding `{i}` and `{j}`.
pub fn pattern_path(pattern: &Path, i: u32, j: u32) -> PathBuf {
    let s = pattern.to_string_lossy();
    PathBuf::from(
        s.replace("{i}", &i.to_string())
            .replace("{j}", &j.to_string()),
    )
}

/// The regions of `cols` x `rows` edge-sharing tiles of `area`, as (i, j, region) in row-major
/// order.
pub fn tile_regions(area: Region, cols: u32, rows: u32) -> Result<Vec<(u32, u32, Region)>, String> {
    let tw = tile_side(area.width, cols, "width")?;
    let th = tile_side(area.height, rows, "height")?;
    let mut out = Vec::with_capacity(cols as usize * rows as usize);
    for j in 0..rows {
        for i in 0..cols {
            let region = Region {
                x: area.x + i * (tw - 1),
                y: area.y + j * (th - 1),
                width: tw,
                height: th,
            };
            out.push((i, j, region));
        }
    }
    Ok(out)
}

/// `grid` split into `cols` x `rows` edge-sharing tiles, as (i, j, tile) in row-major order.
pub fn split(grid: &Heights, cols: u32, rows: u32) -> Result<Vec<(u32, u32, Heights)>, String> {
    let whole = Region {
        x: 0,
        y: 0,
        width: grid.width,
        height: grid.height,
    };
    tile_regions(whole, cols, rows)?
        .into_iter()
        .map(|(i, j, r)| Ok((i, j, crop(grid, r)?)))
        .collect()
}

/// A grid stitched from edge-sharing tiles, and how many shared texels its tiles disagreed on.
pub struct Stitched {
    pub grid: Heights,
    pub disagreeing_texels: u64,
}

/// Stitches `cols` x `rows` edge-sharing tiles; `tile(i, j)` gives tile (i, j). Every tile must
/// have the size of tile (0, 0); an error names the tile (through `name(i, j)`).
pub fn stitch<E: std::fmt::Display>(
    cols: u32,
    rows: u32,
    mut tile: impl FnMut(u32, u32) -> Result<Heights, E>,
    name: impl Fn(u32, u32) -> String,
) -> Result<Stitched, String> {
    if cols == 0 || rows == 0 {
        return Err("a tile set needs at least 1x1 tiles".into());
    }
    let first = tile(0, 0).map_err(|e| e.to_string())?;
    let (tw, th) = (first.width, first.height);
    if tw < 2 || th < 2 {
        return Err(format!(
            "{}: tiles of {tw}x{th} cannot share edges",
            name(0, 0)
        ));
    }
    let width = u64::from(cols) * u64::from(tw - 1) + 1;
    let height = u64::from(rows) * u64::from(th - 1) + 1;
    if width * height > super::formats::MAX_TEXELS || width.max(height) > 65536 {
        return Err(format!(
            "{cols}x{rows} tiles of {tw}x{th} make {width}x{height}, more than one file may hold"
        ));
    }
    let (width, height) = (width as u32, height as u32);
    let mut values = vec![0.0f32; width as usize * height as usize];
    let mut written = vec![false; values.len()];
    let mut disagreeing = 0u64;
    let mut first = Some(first);
    for j in 0..rows {
        for i in 0..cols {
            let t = match first.take() {
                Some(t) => t,
                None => tile(i, j).map_err(|e| e.to_string())?,
            };
            if (t.width, t.height) != (tw, th) {
                return Err(format!(
                    "{}: {}x{}, but tile 0,0 is {tw}x{th} (every tile must have one size)",
                    name(i, j),
                    t.width,
                    t.height
                ));
            }
            let (x0, y0) = (i * (tw - 1), j * (th - 1));
            for (ty, row) in t.values.chunks(tw as usize).enumerate() {
                let at = (y0 as usize + ty) * width as usize + x0 as usize;
                for (k, &v) in row.iter().enumerate() {
                    if written[at + k] {
                        disagreeing += u64::from(values[at + k] != v);
                    } else {
                        values[at + k] = v;
                        written[at + k] = true;
                    }
                }
            }
        }
    }
    Ok(Stitched {
        grid: Heights {
            width,
            height,
            values,
        },
        disagreeing_texels: disagreeing,
    })
}

/// Reads and stitches the `cols` x `rows` tile files `pattern` names (each read with `options`).
pub fn read_set(
    pattern: &Path,
    cols: u32,
    rows: u32,
    options: &ReadOptions,
) -> Result<Stitched, String> {
    stitch(
        cols,
        rows,
        |i, j| super::formats::read(&pattern_path(pattern, i, j), options),
        |i, j| pattern_path(pattern, i, j).display().to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(w: u32, h: u32) -> Heights {
        Heights {
            width: w,
            height: h,
            values: (0..w * h)
                .map(|k| (k as f32 * 0.37).sin() + k as f32)
                .collect(),
        }
    }

    #[test]
    fn tiles_share_edges_and_stitch_back_exactly() {
        let g = ramp(13, 9);
        let tiles = split(&g, 3, 2).unwrap();
        assert_eq!(tiles.len(), 6);
        let t = |i: u32, j: u32| &tiles[(j * 3 + i) as usize].2;
        assert_eq!((t(0, 0).width, t(0, 0).height), (5, 5));
        // The east column of tile (0,0) is the west column of tile (1,0).
        for y in 0..5 {
            assert_eq!(t(0, 0).values[y * 5 + 4], t(1, 0).values[y * 5]);
        }
        let back = stitch(
            3,
            2,
            |i, j| Ok::<_, String>(t(i, j).clone()),
            |i, j| format!("{i},{j}"),
        )
        .unwrap();
        assert_eq!(back.grid, g);
        assert_eq!(back.disagreeing_texels, 0);
    }

    #[test]
    fn sizes_that_do_not_split_are_refused_with_sizes_that_would() {
        let e = split(&ramp(12, 9), 3, 2).err().unwrap();
        assert!(
            e.contains("12 texels (width)") && e.contains("10 or 13"),
            "{e}"
        );
        let e = crop(
            &ramp(12, 9),
            Region {
                x: 10,
                y: 0,
                width: 3,
                height: 2,
            },
        )
        .err()
        .unwrap();
        assert!(e.contains("does not lie inside"), "{e}");
    }

    #[test]
    fn stitching_names_a_tile_of_the_wrong_size_and_counts_disagreeing_edges() {
        let g = ramp(9, 9);
        let mut tiles = split(&g, 2, 2).unwrap();
        tiles[3].2.values[0] += 1.0; // tile (1,1)'s corner, shared with three others
        let get = |i: u32, j: u32| Ok::<_, String>(tiles[(j * 2 + i) as usize].2.clone());
        let s = stitch(2, 2, get, |i, j| format!("t{i}{j}")).unwrap();
        assert_eq!(s.disagreeing_texels, 1);
        assert_eq!(s.grid, g, "the first tile covering a texel wins");
        let wrong = |i: u32, j: u32| {
            Ok::<_, String>(if (i, j) == (1, 0) {
                ramp(4, 5)
            } else {
                ramp(5, 5)
            })
        };
        let e = stitch(2, 2, wrong, |i, j| format!("t{i}{j}"))
            .err()
            .unwrap();
        assert!(e.starts_with("t10: 4x5"), "{e}");
    }

    #[test]
    fn tile_names_follow_the_pattern() {
        assert_eq!(
            tile_path(Path::new("out/land.png"), 2, 3),
            PathBuf::from("out/land_x2_y3.png")
        );
        let p = Path::new("in/land_x{i}_y{j}.r16");
        assert!(is_pattern(p));
        assert_eq!(pattern_path(p, 0, 1), PathBuf::from("in/land_x0_y1.r16"));
    }
}

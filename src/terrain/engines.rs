//! Exports that engines take as they are (docs/engines.md): each engine's heightmap sizes and the
//! fit to them (resampled or cropped), its scales, the files it imports (heights, material weight
//! or splat maps, Terrain3D's control map) and a note of exactly what to enter in its import
//! dialog. The material weights come from [`crate::maps`]: what the viewport shows.

use super::formats::{Heights, WriteOptions};
use crate::atomic_file::FileError;
use crate::maps::kernels::MapKernels;
use crate::maps::materials::{to_levels, NAMES};
use crate::pages::geometry::Region;
use crate::pages::{DocumentDesc, Units};
use std::path::{Path, PathBuf};

/// An engine preset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// Unreal Engine landscapes: a 16-bit PNG at a recommended size, one 8-bit weight map per
    /// material, the X/Y/Z scale.
    Unreal,
    /// Unity terrains: 16-bit little-endian RAW at 2^n + 1, RGBA splat maps, the terrain size.
    Unity,
    /// Godot's Terrain3D: EXR heights in metres and a control map in Terrain3D's format.
    Godot,
}

/// How the document meets the engine's sizes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Fit {
    /// Bilinear resampling to the nearest size, corner samples kept (the extent is kept; the
    /// spacing changes).
    #[default]
    Resample,
    /// A centred crop to the largest size that fits (the spacing is kept; the edges go).
    Crop,
}

/// Unreal's recommended landscape sizes (vertices a side; Landscape Technical Guide,
/// "Recommended Landscape Sizes").
pub const UNREAL_SIZES: [u32; 7] = [127, 253, 505, 1009, 2017, 4033, 8129];

/// Unity's heightmap resolutions: 2^n + 1 from 33 to 4097 (TerrainData.heightmapResolution).
pub const UNITY_SIZES: [u32; 8] = [33, 65, 129, 257, 513, 1025, 2049, 4097];

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Unreal => "unreal",
            Engine::Unity => "unity",
            Engine::Godot => "godot",
        }
    }

    /// The sizes it takes (None: any).
    pub fn sizes(self) -> Option<&'static [u32]> {
        match self {
            Engine::Unreal => Some(&UNREAL_SIZES),
            Engine::Unity => Some(&UNITY_SIZES),
            Engine::Godot => None,
        }
    }

    /// Whether its heightmaps are square.
    fn square(self) -> bool {
        self == Engine::Unity
    }
}

/// The size in `sizes` nearest to `side` by ratio (ties: the larger).
pub fn nearest(sizes: &[u32], side: u32) -> u32 {
    let off = |s: u32| (f64::from(s) / f64::from(side)).ln().abs();
    *sizes
        .iter()
        .rev()
        .min_by(|&&a, &&b| off(a).total_cmp(&off(b)))
        .expect("sizes")
}

/// The largest size in `sizes` at most `side`.
pub fn largest_within(sizes: &[u32], side: u32) -> Option<u32> {
    sizes.iter().copied().filter(|&s| s <= side).max()
}

/// The side a crop takes from `room` samples: `size` where asked and it fits, else the largest of
/// `sizes` within it; None when none fits.
fn crop_size(sizes: &[u32], size: Option<u32>, room: u32) -> Option<u32> {
    match size {
        Some(n) => (n <= room).then_some(n),
        None => largest_within(sizes, room),
    }
}

/// What an export writes: the source region, the output size and its sample spacing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plan {
    pub engine: Engine,
    /// The document's texels the export takes (all of them, or the crop).
    pub source: Region,
    /// Samples a side written.
    pub size: [u32; 2],
    /// Metres between neighbouring samples along x and along y (they differ where a
    /// non-square document is resampled to sizes of another shape).
    pub spacing_m: [f64; 2],
    pub fit: Fit,
    /// Columns and rows of edge-sharing tiles the heights and weight maps are written as, each
    /// one of the engine's sizes (Unreal's World Partition); (1, 1): one file each.
    pub tiles: (u32, u32),
}

impl Plan {
    /// The plan for `engine` over a `width` x `height` document of `texel_m` metres: `fit`
    /// to the engine's sizes, or exactly `size` (one of them) where given.
    pub fn new(
        engine: Engine,
        fit: Fit,
        size: Option<u32>,
        doc: [u32; 2],
        texel_m: f64,
    ) -> Result<Self, String> {
        Self::tiled(engine, fit, size, doc, texel_m, (1, 1))
    }

    /// The plan as [`Self::new`] makes it, written as `tiles` (columns, rows) of edge-sharing
    /// tiles, each of one of the engine's sizes (`size` is then a tile's): Unreal's World
    /// Partition takes a landscape so. Other engines take one file.
    pub fn tiled(
        engine: Engine,
        fit: Fit,
        size: Option<u32>,
        [width, height]: [u32; 2],
        texel_m: f64,
        tiles: (u32, u32),
    ) -> Result<Self, String> {
        if tiles != (1, 1) {
            if engine != Engine::Unreal {
                return Err(format!(
                    "--tiles: {} takes one file (Unreal's World Partition takes tiles; `scarp \
                     convert --tiles` splits any height file)",
                    engine.name()
                ));
            }
            if tiles.0 == 0 || tiles.1 == 0 || tiles.0 > 64 || tiles.1 > 64 {
                return Err(format!(
                    "--tiles: 1 to 64 a side, not {}x{}",
                    tiles.0, tiles.1
                ));
            }
        }
        let whole = Region::whole(width, height);
        let Some(sizes) = engine.sizes() else {
            if size.is_some() {
                return Err(format!(
                    "--resolution: {} takes any size (the document's)",
                    engine.name()
                ));
            }
            return Ok(Self {
                engine,
                source: whole,
                size: [width, height],
                spacing_m: [texel_m; 2],
                fit,
                tiles,
            });
        };
        if let Some(s) = size {
            if !sizes.contains(&s) {
                let list: Vec<String> = sizes.iter().map(u32::to_string).collect();
                return Err(format!(
                    "--resolution: {} takes {}, got {s}",
                    engine.name(),
                    list.join(", ")
                ));
            }
        }
        let size = match tiles {
            (1, 1) => one_file_size(engine, sizes, fit, size, [width, height])?,
            _ => tiled_size(engine, sizes, fit, size, [width, height], tiles)?,
        };
        Ok(match fit {
            Fit::Resample => {
                // Corner samples kept: each axis stretches the document's texels over its samples.
                let along =
                    |doc: u32, n: u32| texel_m * f64::from(doc.max(2) - 1) / f64::from(n - 1);
                Self {
                    engine,
                    source: whole,
                    size,
                    spacing_m: [along(width, size[0]), along(height, size[1])],
                    fit,
                    tiles,
                }
            }
            // A centred window: the spacing kept.
            Fit::Crop => Self {
                engine,
                source: Region {
                    x: (width - size[0]) / 2,
                    y: (height - size[1]) / 2,
                    width: size[0],
                    height: size[1],
                },
                size,
                spacing_m: [texel_m; 2],
                fit,
                tiles,
            },
        })
    }

    /// Each tile's region of the exported heights, as (column, row, region), row-major.
    pub fn tile_regions(&self) -> Vec<(u32, u32, Region)> {
        let (c, r) = self.tiles;
        super::tiles::tile_regions(Region::whole(self.size[0], self.size[1]), c, r)
            .expect("a plan's size is made of its tiles")
    }

    /// What happened to the document, in words.
    pub fn describe(&self, doc: [u32; 2]) -> String {
        let what = self.describe_size(doc);
        match self.tiles {
            (1, 1) => what,
            (c, r) => format!(
                "{what}; written as {c}x{r} tiles of {s}x{s} that share their edge samples",
                s = (self.size[0] - 1) / c + 1
            ),
        }
    }

    fn describe_size(&self, doc: [u32; 2]) -> String {
        let [w, h] = doc;
        let [a, b] = self.size;
        match (self.fit, self.source == Region::whole(w, h) && self.size == doc) {
            (_, true) => format!("the whole {w}x{h} document, as it is"),
            (Fit::Resample, false) => format!(
                "the {w}x{h} document resampled to {a}x{b} (bilinear, corner samples kept): {} between samples",
                self.spacing_words()
            ),
            (Fit::Crop, false) => format!(
                "the {w}x{h} document cropped to {a}x{b} from texel ({}, {}): {} between samples, as the document",
                self.source.x,
                self.source.y,
                self.spacing_words()
            ),
        }
    }

    /// The spacing in words: "1.0156 m", or "1.0000 m along x, 1.2000 m along y".
    fn spacing_words(&self) -> String {
        let [x, y] = self.spacing_m;
        match x == y {
            true => format!("{x:.4} m"),
            false => format!("{x:.4} m along x, {y:.4} m along y"),
        }
    }

    /// The spacing one number stands for where one is needed (the sidecar's texel size, the
    /// drainage's texel area): the geometric mean of the two.
    pub fn mean_spacing_m(&self) -> f64 {
        (self.spacing_m[0] * self.spacing_m[1]).sqrt()
    }

    /// The document `desc` as the export writes it: its units with the plan's spacing.
    pub fn desc(&self, desc: &DocumentDesc) -> DocumentDesc {
        DocumentDesc {
            units: Units {
                texel_size: Some(self.mean_spacing_m()),
                height_unit: Some(desc.height_unit()),
                height_origin: desc.units.height_origin,
                geo: None,
            },
            ..DocumentDesc::for_heights(self.size[0], self.size[1])
        }
    }

    /// The plan's heights from the whole document's `grid`.
    pub fn heights(&self, grid: &Heights) -> Heights {
        let whole = Region::whole(self.size[0], self.size[1]);
        self.samples(whole, |r| super::tiles::crop(grid, r))
            .expect("the plan's source lies in its document")
    }

    /// The plan's samples `out` (of its `size`), from the document's texels `read` gives for a
    /// region (the heights, or a stored map): the source window those samples need, and no
    /// more, resampled as [`resample`] does the whole, bit for bit.
    pub fn samples<E>(
        &self,
        out: Region,
        read: impl FnOnce(Region) -> Result<Heights, E>,
    ) -> Result<Heights, E> {
        let from = [self.source.width, self.source.height];
        let window = match from == self.size {
            true => out,
            false => resample_source(from, self.size, out),
        };
        let at = Region {
            x: self.source.x + window.x,
            y: self.source.y + window.y,
            ..window
        };
        let src = read(at)?;
        let values = match from == self.size {
            true => src.values,
            false => resample_window(&src.values, window, from, self.size, out),
        };
        Ok(Heights {
            width: out.width,
            height: out.height,
            values,
        })
    }
}

/// The samples a side of one file for `engine` (of `sizes`) over a `width` x `height`
/// document: `size` where given, else the nearest (resample) or the largest within (crop).
fn one_file_size(
    engine: Engine,
    sizes: &[u32],
    fit: Fit,
    size: Option<u32>,
    [width, height]: [u32; 2],
) -> Result<[u32; 2], String> {
    let square = engine.square();
    match fit {
        Fit::Resample => {
            let sides = match square {
                true => [width.max(height); 2],
                false => [width, height],
            };
            Ok(sides.map(|s| size.unwrap_or_else(|| nearest(sizes, s))))
        }
        Fit::Crop => {
            let within = |s: u32| {
                crop_size(sizes, size, s).ok_or_else(|| {
                    format!(
                        "--fit crop: the document ({width}x{height}) is smaller than {}'s sizes{}",
                        engine.name(),
                        size.map_or(String::new(), |n| format!(" ({n} asked)"))
                    )
                })
            };
            Ok(match square {
                true => [within(width.min(height))?; 2],
                false => [within(width)?, within(height)?],
            })
        }
    }
}

/// The samples a side of `tiles` (columns, rows) edge-sharing square tiles of one of `sizes`
/// (`size` where given, else the nearest to a tile's share of the document, or with a crop the
/// largest within it): `n·(s − 1) + 1` along each axis.
fn tiled_size(
    engine: Engine,
    sizes: &[u32],
    fit: Fit,
    size: Option<u32>,
    [width, height]: [u32; 2],
    (cols, rows): (u32, u32),
) -> Result<[u32; 2], String> {
    let per_tile = [(width - 1) / cols + 1, (height - 1) / rows + 1];
    let s = match fit {
        Fit::Resample => size.unwrap_or_else(|| nearest(sizes, per_tile[0].max(per_tile[1]))),
        Fit::Crop => {
            let room = per_tile[0].min(per_tile[1]);
            crop_size(sizes, size, room).ok_or_else(|| {
                format!(
                    "--fit crop: the document ({width}x{height}) holds no {cols}x{rows} tiles of {}'s sizes{}",
                    engine.name(),
                    size.map_or(String::new(), |n| format!(" ({n} asked)"))
                )
            })?
        }
    };
    let total = [cols * (s - 1) + 1, rows * (s - 1) + 1];
    Ok(total)
}

/// Where sample `i` of `n` falls among `m` source samples (corner samples kept: at
/// i·(m − 1)/(n − 1)): the source sample before it and the fraction of the way to the next.
fn resample_axis(i: usize, n: usize, m: usize) -> (usize, f32) {
    let c = match n > 1 {
        true => i as f64 * (m - 1) as f64 / (n - 1) as f64,
        false => 0.0,
    };
    let i0 = (c.floor() as usize).min(m.saturating_sub(2));
    (i0, (c - i0 as f64) as f32)
}

/// `v` (`from`, row-major) resampled bilinearly to `to`, corner samples kept (sample i of n lies
/// at i·(m − 1)/(n − 1) of the m source samples).
pub fn resample(v: &[f32], from: [u32; 2], to: [u32; 2]) -> Vec<f32> {
    let whole = |[w, h]: [u32; 2]| Region::whole(w, h);
    resample_window(v, whole(from), from, to, whole(to))
}

/// The source samples (of `from`) that the samples `out` of a resampling to `to` read: the
/// window [`resample_window`] takes.
pub fn resample_source(from: [u32; 2], to: [u32; 2], out: Region) -> Region {
    let span = |first: u32, count: u32, n: u32, m: u32| {
        let (a, _) = resample_axis(first as usize, n as usize, m as usize);
        let (b, _) = resample_axis((first + count - 1) as usize, n as usize, m as usize);
        let last = (b + 1).min(m as usize - 1);
        (a as u32, (last - a + 1) as u32)
    };
    let (x, width) = span(out.x, out.width, to[0], from[0]);
    let (y, height) = span(out.y, out.height, to[1], from[1]);
    Region {
        x,
        y,
        width,
        height,
    }
}

/// The samples `out` of `from` resampled to `to` as [`resample`] makes them, bit for bit, from
/// the source samples `at` only (`v`, row-major: at least [`resample_source`]'s window).
pub fn resample_window(
    v: &[f32],
    at: Region,
    from: [u32; 2],
    to: [u32; 2],
    out: Region,
) -> Vec<f32> {
    let [fw, fh] = from.map(|s| s as usize);
    let [tw, th] = to.map(|s| s as usize);
    let (aw, ax, ay) = (at.width as usize, at.x as usize, at.y as usize);
    use rayon::prelude::*;
    let src = |x: usize, y: usize| v[(y - ay) * aw + (x - ax)];
    let mut values = vec![0.0; out.width as usize * out.height as usize];
    // Rows on every core: each sample's arithmetic is its own, so the result is the same.
    values
        .par_chunks_mut(out.width as usize)
        .enumerate()
        .for_each(|(row, line)| {
            let (y0, fy) = resample_axis(out.y as usize + row, th, fh);
            let y1 = (y0 + 1).min(fh - 1);
            for (i, value) in line.iter_mut().enumerate() {
                let (x0, fx) = resample_axis(out.x as usize + i, tw, fw);
                let x1 = (x0 + 1).min(fw - 1);
                let top = src(x0, y0) + (src(x1, y0) - src(x0, y0)) * fx;
                let bottom = src(x0, y1) + (src(x1, y1) - src(x0, y1)) * fx;
                *value = top + (bottom - top) * fy;
            }
        });
    values
}

/// Interleaved `channels` (`from`, row-major) resampled as [`resample`] does, channel by
/// channel.
pub fn resample_channels(v: &[f32], channels: usize, from: [u32; 2], to: [u32; 2]) -> Vec<f32> {
    let planes: Vec<Vec<f32>> = (0..channels)
        .map(|c| {
            let plane: Vec<f32> = v.iter().skip(c).step_by(channels).copied().collect();
            resample(&plane, from, to)
        })
        .collect();
    let n = (to[0] * to[1]) as usize;
    (0..n)
        .flat_map(|i| planes.iter().map(move |p| p[i]))
        .collect()
}

/// Terrain3D's control-map value of a texel with material weights `w`: the heaviest material
/// as the base texture, the next as the overlay, blended by the overlay's share of the two
/// (Terrain3D's "controlmap format": base id bits 32–28, overlay id 27–23, blend 22–15; the
/// autoshader bit off). Material ids are [`NAMES`]' indices.
pub fn terrain3d_control(w: &[f32]) -> u32 {
    let mut order: Vec<usize> = (0..w.len()).collect();
    order.sort_by(|&a, &b| w[b].total_cmp(&w[a]).then(a.cmp(&b)));
    let (base, overlay) = (order[0], order[1]);
    let pair = w[base] + w[overlay];
    let blend = match pair > 0.0 {
        true => (w[overlay] / pair * 255.0).round() as u32,
        false => 0,
    };
    ((base as u32 & 0x1F) << 27) | ((overlay as u32 & 0x1F) << 22) | ((blend & 0xFF) << 14)
}

/// Why an engine export did not happen.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The document does not meet the engine's sizes as asked (names the flag).
    #[error("{0}")]
    Plan(String),
    /// The material weights could not be computed.
    #[error("material weights: {0}")]
    Weights(String),
    /// The drainage could not be computed.
    #[error("drainage: {0}")]
    Drainage(String),
    /// The heights or a stored map could not be read.
    #[error("{0}")]
    Read(String),
    #[error(transparent)]
    File(#[from] FileError),
}

/// A map an export may add beside the heights and the materials (docs/maps.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MapKind {
    /// Slope, degrees.
    Slope,
    /// Curvature, 1/m (the Laplacian of the heights in metres; concave above 0).
    Curvature,
    /// Profile curvature, 1/m: the curvature along the steepest slope (concave above 0).
    Profile,
    /// Plan curvature, 1/m: the curvature of the contour lines (converging above 0).
    Plan,
    /// D8 drainage area, m².
    Drainage,
    /// Topographic wetness, ln(a / tan β): a the drainage area per metre of contour (A / the
    /// spacing), β the slope (tan β at least 0.001).
    Wetness,
    /// Erosion's wear: metres of ground removed by the project's erosion runs (src/wear.rs).
    Wear,
    /// Erosion's deposits: metres laid down by them.
    Deposits,
}

impl MapKind {
    /// How many there are.
    pub const COUNT: usize = 8;

    /// Every map, in the order the flags and the editor's Export dialog list them.
    pub const ALL: [MapKind; MapKind::COUNT] = [
        MapKind::Slope,
        MapKind::Curvature,
        MapKind::Profile,
        MapKind::Plan,
        MapKind::Drainage,
        MapKind::Wetness,
        MapKind::Wear,
        MapKind::Deposits,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MapKind::Slope => "slope",
            MapKind::Curvature => "curvature",
            MapKind::Profile => "profile",
            MapKind::Plan => "plan",
            MapKind::Drainage => "drainage",
            MapKind::Wetness => "wetness",
            MapKind::Wear => "wear",
            MapKind::Deposits => "deposits",
        }
    }

    fn unit(self) -> &'static str {
        match self {
            MapKind::Slope => "degrees",
            MapKind::Curvature | MapKind::Profile | MapKind::Plan => "1/m",
            MapKind::Drainage => "m²",
            MapKind::Wetness => "ln(m)",
            MapKind::Wear | MapKind::Deposits => "m",
        }
    }

    /// The document field a stored map is read from (a project's wear and deposits: the
    /// exporter is given their grids); None for a map derived from the heights.
    pub fn stored_field(self) -> Option<&'static str> {
        match self {
            MapKind::Wear => Some(crate::wear::WEAR_FIELD),
            MapKind::Deposits => Some(crate::wear::DEPOSITS_FIELD),
            _ => None,
        }
    }

    /// Whether it is a stored map ([`Self::stored_field`]).
    pub fn stored(self) -> bool {
        self.stored_field().is_some()
    }

    /// The weight kernel's surface map it is, if it is one.
    pub fn surface(self) -> Option<crate::maps::Surface> {
        use crate::maps::Surface;
        match self {
            MapKind::Slope => Some(Surface::Slope),
            MapKind::Curvature => Some(Surface::Curvature),
            MapKind::Profile => Some(Surface::Profile),
            MapKind::Plan => Some(Surface::Plan),
            _ => None,
        }
    }

    /// Whether a sample's value depends on the whole landscape (everything upstream of it).
    pub fn global(self) -> bool {
        matches!(self, MapKind::Drainage | MapKind::Wetness)
    }
}

/// What an engine export asks for.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub engine: Engine,
    pub fit: Fit,
    /// Samples a side (one the engine takes; a tile's with `tiles`); None: the fit's choice.
    pub resolution: Option<u32>,
    /// Maps written beside the heights, each a 32-bit EXR in its unit.
    pub maps: Vec<MapKind>,
    /// Columns and rows of edge-sharing tiles (Unreal's World Partition); None: one file.
    pub tiles: Option<(u32, u32)>,
}

/// What an export reads: windows of the exported area, its texel (0, 0) the area's first, so
/// that a project is read a window at a time and never whole.
pub trait Input {
    /// The area's texels along x and y.
    fn size(&self) -> [u32; 2];
    /// Its heights over `r`.
    fn heights(&mut self, r: Region) -> Result<Heights, String>;
    /// Whether it holds stored map `kind` ([`MapKind::stored`]: a project's wear and deposits).
    fn holds(&self, kind: MapKind) -> bool;
    /// Stored map `kind` over `r`.
    fn stored(&mut self, kind: MapKind, r: Region) -> Result<Heights, String>;
}

/// A grid held whole: no stored maps (the unit tests' input, and any caller's with a grid).
pub struct Held<'a>(pub &'a Heights);

impl Input for Held<'_> {
    fn size(&self) -> [u32; 2] {
        [self.0.width, self.0.height]
    }

    fn heights(&mut self, r: Region) -> Result<Heights, String> {
        super::tiles::crop(self.0, r)
    }

    fn holds(&self, _: MapKind) -> bool {
        false
    }

    fn stored(&mut self, kind: MapKind, _: Region) -> Result<Heights, String> {
        Err(format!(
            "--maps {}: only a .scarp project holds it",
            kind.name()
        ))
    }
}

/// The most samples an export makes whole: a map that needs the whole landscape at once
/// (drainage and wetness: a sample's area depends on everything upstream), and the one file of
/// Unity (at most 4097² anyway) or Godot, with its heights, weights, surface maps and drainage
/// in memory (about 60 bytes a sample, 16 GB here; 4 x 4 tiles of 4033 fit). Unreal's files
/// are made a band at a time and have no such limit.
pub const MAX_GLOBAL_SAMPLES: u64 = 1 << 28;

/// Output samples an Unreal export computes at a time (a band of a tile's rows): their heights,
/// weights and surface maps are about 40 bytes a sample. A band reads at most 4 times as many
/// source texels (where the plan shrinks the document, a band of one row may read more: the
/// rows its samples fall between).
const BAND_SAMPLES: u64 = 1 << 22;

/// Exports the area `input` gives, of document `desc`, for `req.engine` to files named after
/// `out` (`DIR/NAME`), the weight maps by `materials` (anchored on the exported heights as the
/// viewport anchors them on the document's) computed by `kernels` (the GPU's or their twins).
/// Unreal's files are made a band of rows at a time, each from the window of the area under it:
/// a project of any size exports in the memory of one tile's images. Other engines' one file,
/// and drainage and wetness, are made whole (at most [`MAX_GLOBAL_SAMPLES`]), their heights
/// still read a band at a time. `progress` is told the samples made and how many there are to
/// make (an Unreal export makes each twice: first for the heights' range).
pub fn export(
    input: &mut dyn Input,
    desc: &DocumentDesc,
    req: Request,
    materials: &crate::render::look::Materials,
    out: &Path,
    kernels: &mut dyn MapKernels,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Written, ExportError> {
    let size = input.size();
    let plan = Plan::tiled(
        req.engine,
        req.fit,
        req.resolution,
        size,
        desc.texel_size(),
        req.tiles.unwrap_or((1, 1)),
    )
    .map_err(ExportError::Plan)?;
    if let Some(k) = req.maps.iter().find(|k| k.stored() && !input.holds(**k)) {
        return Err(ExportError::Plan(format!(
            "--maps {}: only a .scarp project holds it",
            k.name()
        )));
    }
    check(&plan, &req.maps).map_err(ExportError::Plan)?;
    let samples = u64::from(plan.size[0]) * u64::from(plan.size[1]);
    let out_desc = plan.desc(desc);
    let whole = Region::whole(plan.size[0], plan.size[1]);
    let tiles = plan.tile_regions();
    let total = samples
        + match plan.engine {
            Engine::Unreal => tiles.iter().map(|(_, _, r)| r.samples()).sum(),
            _ => 0,
        };
    let mut done = 0;
    let mut step = |n: u64| {
        done += n;
        progress(done, total)
    };
    let unreal = plan.engine == Engine::Unreal;
    let global = req.maps.iter().any(|k| k.global());
    // Other engines' files, and the maps whose every sample needs the whole landscape, are
    // made from the whole landscape's heights (made band by band: the source is read a window
    // at a time); Unreal's range then comes from them.
    let heights = match global || !unreal {
        true => Some(whole_samples(&plan, input, &mut step)?),
        false => None,
    };
    let range = match &heights {
        Some(h) => super::formats::min_max(&h.values),
        None => unreal_range(&plan, input, BAND_SAMPLES, &mut step)?,
    };
    // Anchored as the viewport anchors them: on the document's own units.
    let m = materials.on_document(desc, range);
    let push = |r: Region| {
        crate::maps::MapsPush::new(&out_desc, [r.width, r.height], [r.x, r.y], range, &m)
            .spaced(plan.spacing_m)
    };
    // Drainage and wetness share one D8 accumulation.
    let area = match (&heights, global) {
        (Some(h), true) => Some(
            kernels
                .drainage(&h.values, plan.size, &out_desc)
                .map_err(|e| ExportError::Drainage(e.to_string()))?,
        ),
        _ => None,
    };
    // The weights and surface maps of the whole: other engines' files; for Unreal, the slope
    // its wetness needs (its tiles make their own weights).
    let wet = req.maps.contains(&MapKind::Wetness);
    let maps = match &heights {
        Some(h) if !unreal || wet => Some(
            kernels
                .maps(&h.values, &push(whole))
                .map_err(|e| ExportError::Weights(e.to_string()))?,
        ),
        _ => None,
    };
    let extra: Vec<(MapKind, Vec<f32>)> = match &maps {
        Some(maps) => req
            .maps
            .iter()
            .filter(|k| !unreal || k.global())
            .map(|&k| {
                let values = match k.stored() {
                    true => {
                        plan.samples(whole, |r| input.stored(k, r))
                            .map_err(ExportError::Read)?
                            .values
                    }
                    false => derived(k, &out_desc, maps, area.as_deref()),
                };
                Ok((k, values))
            })
            .collect::<Result<_, ExportError>>()?,
        // Unreal with drainage alone.
        None => match &area {
            Some(a) => vec![(MapKind::Drainage, a.iter().map(|&v| v as f32).collect())],
            None => Vec::new(),
        },
    };
    let mut written = Written::default();
    let result = match (unreal, heights, &maps) {
        (true, _, _) => {
            // The whole landscape's heights, weights and area are not needed past here.
            drop((maps, area));
            let globals = extra.as_slice();
            let mut tile = |r: Region| {
                let bands = bands(&plan, r, BAND_SAMPLES);
                unreal_tile(
                    &plan, input, r, bands, &req.maps, globals, &push, kernels, &mut step,
                )
            };
            let u = Unreal {
                plan: &plan,
                desc: &out_desc,
                range,
                doc_size: size,
                maps: &req.maps,
            };
            write_unreal(&u, &tiles, &mut tile, out, &mut written)
        }
        (false, Some(heights), Some(maps)) => {
            let o = Outputs {
                plan: &plan,
                desc: &out_desc,
                grid: &heights,
                weights: &maps.weights,
                extra: &extra,
                doc_size: size,
            };
            write_files(&o, out, &mut written)
        }
        _ => unreachable!("other engines' exports are made whole"),
    };
    if result.is_err() {
        for f in written.files.iter().chain([&written.note]) {
            let _ = std::fs::remove_file(f);
            let _ = std::fs::remove_file(super::sidecar::path_of(f));
        }
    }
    result.map(|()| written)
}

/// Refuses, by name, an export that would hold too much in memory at once: a map whose every
/// sample needs the whole landscape (drainage, wetness), or one file of an engine other than
/// Unreal (made whole), past [`MAX_GLOBAL_SAMPLES`]. `scarp export` asks before any work.
pub fn check(plan: &Plan, maps: &[MapKind]) -> Result<(), String> {
    let samples = u64::from(plan.size[0]) * u64::from(plan.size[1]);
    if samples <= MAX_GLOBAL_SAMPLES {
        return Ok(());
    }
    let [w, h] = plan.size;
    if let Some(k) = maps.iter().find(|k| k.global()) {
        return Err(format!(
            "--maps {}: a sample's area depends on everything upstream, so the whole {w}x{h} \
             landscape is made in memory, past the {MAX_GLOBAL_SAMPLES} samples it may hold: a \
             smaller size or region",
            k.name()
        ));
    }
    match plan.engine {
        Engine::Unreal => Ok(()),
        e => Err(format!(
            "{}: its one {w}x{h} file is made in memory, past the {MAX_GLOBAL_SAMPLES} samples \
             it may hold: export a --region at a time",
            e.name()
        )),
    }
}

/// All of `plan`'s samples, made a band of rows at a time (each from its window of the source:
/// the same values as one call over the whole, and the source never read whole).
fn whole_samples(
    plan: &Plan,
    input: &mut dyn Input,
    step: &mut dyn FnMut(u64),
) -> Result<Heights, ExportError> {
    let whole = Region::whole(plan.size[0], plan.size[1]);
    let mut values = Vec::with_capacity(whole.samples() as usize);
    for band in bands(plan, whole, BAND_SAMPLES) {
        let h = plan
            .samples(band, |s| input.heights(s))
            .map_err(ExportError::Read)?;
        values.extend(h.values);
        step(band.samples());
    }
    Ok(Heights {
        width: plan.size[0],
        height: plan.size[1],
        values,
    })
}

/// The bands of rows `r` is made in: as many rows as keep a band within `samples` and its
/// source window within 4 times that, at least one ([`BAND_SAMPLES`]: what an export takes).
fn bands(plan: &Plan, r: Region, samples: u64) -> impl Iterator<Item = Region> {
    let texels_a_row = u64::from(r.width)
        * u64::from(plan.source.width.div_ceil(plan.size[0]).max(1))
        * u64::from(plan.source.height.div_ceil(plan.size[1]).max(1));
    let rows = (samples / u64::from(r.width))
        .min(4 * samples / texels_a_row)
        .clamp(1, u64::from(r.height)) as u32;
    (0..r.height.div_ceil(rows)).map(move |b| {
        let y = r.y + b * rows;
        Region {
            y,
            height: rows.min(r.y + r.height - y),
            ..r
        }
    })
}

/// The range of an Unreal export's heights, its samples made band by band (the 16-bit levels
/// and the materials' altitudes span it, so it is known before any file is written).
fn unreal_range(
    plan: &Plan,
    input: &mut dyn Input,
    budget: u64,
    step: &mut dyn FnMut(u64),
) -> Result<(f32, f32), ExportError> {
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    // Edge samples shared by two tiles are made once: the plan's rows, a band at a time.
    for band in bands(plan, Region::whole(plan.size[0], plan.size[1]), budget) {
        let h = plan
            .samples(band, |s| input.heights(s))
            .map_err(ExportError::Read)?;
        for &v in h.values.iter().filter(|v| !v.is_nan()) {
            (lo, hi) = (lo.min(v), hi.max(v));
        }
        step(band.samples());
    }
    // As `min_max` has it for the whole: (0, 0) where there is no number.
    Ok(match lo > hi {
        true => (0.0, 0.0),
        false => (lo, hi),
    })
}

/// One tile of an Unreal export: its heights, the materials' 8-bit levels (5 a sample) and the
/// maps asked for.
struct UnrealTile {
    heights: Heights,
    levels: Vec<u8>,
    extra: Vec<(MapKind, Vec<f32>)>,
}

/// Tile `r` of `plan`, in `bands` of its rows: each band's heights with a sample around it (the weights'
/// and surface maps' neighbours, so a band's samples are those of the whole), its weights by
/// `kernels` at the band's place (the materials' breakup noise follows the sample), and the maps
/// `kinds` (the whole landscape's `globals` cut to the tile).
#[allow(clippy::too_many_arguments)]
fn unreal_tile(
    plan: &Plan,
    input: &mut dyn Input,
    r: Region,
    bands: impl Iterator<Item = Region>,
    kinds: &[MapKind],
    globals: &[(MapKind, Vec<f32>)],
    push: &dyn Fn(Region) -> crate::maps::MapsPush,
    kernels: &mut dyn MapKernels,
    step: &mut dyn FnMut(u64),
) -> Result<UnrealTile, ExportError> {
    let n = r.width as usize * r.height as usize;
    let mut tile = UnrealTile {
        heights: Heights {
            width: r.width,
            height: r.height,
            values: Vec::with_capacity(n),
        },
        levels: Vec::with_capacity(n * 5),
        extra: kinds.iter().map(|&k| (k, Vec::with_capacity(n))).collect(),
    };
    for band in bands {
        let (outer, inner) = band.apron(plan.size);
        let h = plan
            .samples(outer, |s| input.heights(s))
            .map_err(ExportError::Read)?;
        let maps = kernels
            .maps(&h.values, &push(outer))
            .map_err(|e| ExportError::Weights(e.to_string()))?;
        tile.heights
            .values
            .extend(inner.cut(&h.values, outer.width));
        let weights = inner.cut_channels(&maps.weights, outer.width, 5);
        use rayon::prelude::*;
        let levels: Vec<u8> = weights.par_chunks(5).flat_map_iter(to_levels).collect();
        tile.levels.extend(levels);
        for (k, values) in &mut tile.extra {
            if let Some(s) = k.surface() {
                let all: Vec<f32> = maps.surface(s).collect();
                values.extend(inner.cut(&all, outer.width));
                continue;
            }
            match *k {
                MapKind::Wear | MapKind::Deposits => values.extend(
                    plan.samples(band, |s| input.stored(*k, s))
                        .map_err(ExportError::Read)?
                        .values,
                ),
                _ => {
                    let (_, all) = globals.iter().find(|(g, _)| g == k).expect("made whole");
                    values.extend(band.cut(all, plan.size[0]));
                }
            }
        }
        step(band.samples());
    }
    Ok(tile)
}

/// What an Unreal export's files and note are made of, besides its tiles.
struct Unreal<'a> {
    plan: &'a Plan,
    /// The exported heights' document (the plan's spacing).
    desc: &'a DocumentDesc,
    /// The heights' range: the 16-bit levels span it.
    range: (f32, f32),
    /// The whole document's size (for the note).
    doc_size: [u32; 2],
    maps: &'a [MapKind],
}

/// Writes an Unreal export: the heights of each of `tiles` (one, or Unreal's World Partition
/// tiles named `NAME_x{i}_y{j}`), one 8-bit weight map per material and each map asked for,
/// tile by tile as `tile` makes them, and `NAME.txt`. What it wrote is in `written`.
fn write_unreal(
    u: &Unreal,
    tiles: &[(u32, u32, Region)],
    tile: &mut dyn FnMut(Region) -> Result<UnrealTile, ExportError>,
    out: &Path,
    written: &mut Written,
) -> Result<(), ExportError> {
    let (plan, desc) = (u.plan, u.desc);
    let [w, h] = plan.size;
    let (lo, hi) = super::formats::spanning(u.range);
    let (z0, z1) = (desc.metres(lo), desc.metres(hi));
    let opts = WriteOptions {
        range: Some((lo, hi)),
        bits: Some(16),
        ..WriteOptions::default()
    };
    let tiled = plan.tiles != (1, 1);
    // One file, or tiles named NAME_x{i}_y{j}: Unreal finds a tile set by that suffix.
    let suffix = |i: u32, j: u32| match tiled {
        true => format!("_x{i}_y{j}"),
        false => String::new(),
    };
    for &(i, j, r) in tiles {
        let t = tile(r)?;
        let path = with_suffix(out, &format!("{}.png", suffix(i, j)));
        super::export::write_with_sidecar(
            &path,
            &t.heights,
            desc,
            (r.x, r.y),
            &opts,
            &mut |_, _| {},
        )?;
        written.files.push(path);
        // The five weight maps are encoded side by side (PNG's deflate is one thread a file).
        use rayon::prelude::*;
        let maps: Vec<(PathBuf, Result<Vec<u8>, FileError>)> = NAMES
            .par_iter()
            .enumerate()
            .map(|(k, m)| {
                let p = with_suffix(out, &format!("_{m}{}.png", suffix(i, j)));
                let gray: Vec<u8> = t.levels.iter().skip(k).step_by(5).copied().collect();
                let png = png_bytes(&p, image::GrayImage::from_raw(r.width, r.height, gray));
                (p, png)
            })
            .collect();
        for (p, png) in maps {
            crate::atomic_file::write_bytes_atomic(&p, &png?)?;
            written.files.push(p);
        }
        for (kind, values) in t.extra {
            let p = with_suffix(out, &format!("_{}{}.exr", kind.name(), suffix(i, j)));
            let m = Heights {
                width: r.width,
                height: r.height,
                values,
            };
            super::formats::write(&p, &m, &WriteOptions::default())?;
            written.files.push(p);
        }
    }
    let name = |suffix: &str| file_name(&with_suffix(out, suffix));
    let first = name(&format!("{}.png", suffix(0, 0)));
    let mut note = vec![
        format!("Scarp export for {}", plan.engine.name()),
        format!("Source: {}", plan.describe(u.doc_size)),
        format!("Heights: {z0:.3} m to {z1:.3} m"),
        "Landscape mode > Manage > New > Import from File:".into(),
    ];
    match tiled {
        true => {
            let (c, r) = plan.tiles;
            let s = tiles[0].2.width;
            note.push(format!(
                "  Heightmap File: {first} - the first of {c} x {r} tiles of {s} x {s} (16-bit PNG, \
                 neighbouring tiles share their edge samples: {w} x {h} in all; the \
                 importer finds the others by their _x{{i}}_y{{j}} names)"
            ));
            note.push(
                "  World Partition: on (Enable World Partition in the New Landscape panel)".into(),
            );
        }
        false => note.push(format!("  Heightmap File: {first} ({w} x {h}, 16-bit PNG)")),
    }
    note.push(format!(
        "  Location: X 0  Y 0  Z {:.3}",
        0.5 * (z0 + z1) * 100.0
    ));
    note.push(format!(
        "  Scale: X {:.4}  Y {:.4}  Z {:.4}",
        plan.spacing_m[0] * 100.0,
        plan.spacing_m[1] * 100.0,
        (z1 - z0) * 100.0 / 512.0
    ));
    note.push("  Layers (weight-blended; Import Layers, one file each):".into());
    for m in NAMES {
        note.push(format!(
            "    {m}: {}",
            name(&format!("_{m}{}.png", suffix(0, 0)))
        ));
    }
    if !u.maps.is_empty() {
        let each = match tiled {
            true => "each tile's, ",
            false => "",
        };
        note.push(format!(
            "Maps ({each}32-bit EXR, rows north first, as the PNG heights'):"
        ));
    }
    for kind in u.maps {
        let p = name(&format!("_{}{}.exr", kind.name(), suffix(0, 0)));
        note.push(format!("  {}: {p} ({})", kind.name(), kind.unit()));
    }
    write_note(out, &note, written)
}

/// Map `kind` of the exported heights (of `desc`) from the kernel's `maps` and, for drainage
/// and wetness, the D8 drainage `area` (m²).
fn derived(
    kind: MapKind,
    desc: &DocumentDesc,
    maps: &crate::maps::Maps,
    area: Option<&[f64]>,
) -> Vec<f32> {
    if let Some(s) = kind.surface() {
        return maps.surface(s).collect();
    }
    let slope = || maps.surface(crate::maps::Surface::Slope);
    let area = || area.expect("made for drainage and wetness");
    match kind {
        MapKind::Drainage => area().iter().map(|&a| a as f32).collect(),
        MapKind::Wetness => crate::maps::flow::wetness(area(), slope(), desc.texel_size()),
        _ => unreachable!("surface maps above; stored maps are given, not derived"),
    }
}

/// The files an export wrote.
#[derive(Debug, Default)]
pub struct Written {
    pub files: Vec<PathBuf>,
    /// The note of what to enter in the engine's import dialog.
    pub note: PathBuf,
}

/// What a Unity or Godot export writes: one file of each, made whole.
pub struct Outputs<'a> {
    pub plan: &'a Plan,
    /// The exported heights (the plan's), of document `desc` (the plan's spacing).
    pub desc: &'a DocumentDesc,
    pub grid: &'a Heights,
    /// Material weights, 5 per texel ([`NAMES`] order).
    pub weights: &'a [f32],
    /// Maps beside them.
    pub extra: &'a [(MapKind, Vec<f32>)],
    /// The whole document's size (for the note).
    pub doc_size: [u32; 2],
}

fn with_suffix(out: &Path, suffix: &str) -> PathBuf {
    let mut name = out.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    out.with_file_name(name)
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// Writes `NAME.txt`, the `note`'s lines.
fn write_note(out: &Path, note: &[String], written: &mut Written) -> Result<(), ExportError> {
    let path = out.with_file_name(format!("{}.txt", file_name(out)));
    let text = note.join("\n") + "\n";
    crate::atomic_file::write_bytes_atomic(&path, text.as_bytes())?;
    written.note = path;
    Ok(())
}

/// Writes a Unity or Godot export to files named after `out` (`DIR/NAME`): the heights, the
/// maps and `NAME.txt`. What it wrote is in `written`.
fn write_files(o: &Outputs, out: &Path, written: &mut Written) -> Result<(), ExportError> {
    let &Outputs {
        plan,
        desc,
        grid,
        weights,
        extra,
        doc_size,
    } = o;
    let [w, h] = plan.size;
    // A flat document still gets a range (one height unit) its integer values span.
    let (lo, hi) = super::formats::default_range(&grid.values);
    let (z0, z1) = (desc.metres(lo), desc.metres(hi));
    let name = |p: &Path| file_name(p);
    let mut note = vec![
        format!("Scarp export for {}", plan.engine.name()),
        format!("Source: {}", plan.describe(doc_size)),
        format!("Heights: {z0:.3} m to {z1:.3} m"),
    ];
    match plan.engine {
        Engine::Unreal => unreachable!("Unreal's exports are written tile by tile"),
        Engine::Unity => {
            // Rows south first, as Unity's RAW import fills the terrain from z = 0.
            let flipped: Vec<f32> = grid
                .values
                .chunks(w as usize)
                .rev()
                .flatten()
                .copied()
                .collect();
            let raw = Heights {
                values: flipped,
                ..*grid
            };
            let path = with_suffix(out, ".raw");
            let opts = WriteOptions {
                range: Some((lo, hi)),
                ..WriteOptions::default()
            };
            super::export::write_with_sidecar(&path, &raw, desc, (0, 0), &opts, &mut |_, _| {})?;
            written.files.push(path.clone());
            let side = plan.spacing_m[0] * f64::from(w - 1);
            let length = plan.spacing_m[1] * f64::from(h - 1);
            note.push("Terrain Settings:".into());
            note.push(format!("  Heightmap Resolution: {w}"));
            note.push(format!(
                "  Terrain Width: {side:.3}  Terrain Length: {length:.3}  Terrain Height: {:.3}",
                z1 - z0
            ));
            note.push(format!(
                "  Import Raw: {} - Depth: Bit 16, Width {w}, Height {h}, Byte Order: Windows, Flip Vertically: off (rows are written south first)",
                name(&path)
            ));
            note.push(format!("Terrain position: Y {z0:.3} (the lowest height)"));
            // Control textures are a power of two a side: the weights resampled to N − 1,
            // corner samples kept.
            let (sw, sh) = (w - 1, h - 1);
            let splat = resample_channels(weights, 5, [w, h], [sw, sh]);
            let levels: Vec<u8> = splat.chunks(5).flat_map(to_levels).collect();
            note.push(format!(
                "Splat maps ({sw} x {sh}, Control Texture Resolution {sw}; weights sum to 255 per texel over both):"
            ));
            for (i, mats) in [[0usize, 1, 2, 3], [4, 5, 5, 5]].iter().enumerate() {
                let p = with_suffix(out, &format!("_splat{i}.png"));
                let rgba: Vec<u8> = (0..(sw * sh) as usize)
                    .flat_map(|t| mats.map(|k| if k < 5 { levels[t * 5 + k] } else { 0 }))
                    .collect();
                write_image(&p, image::RgbaImage::from_raw(sw, sh, rgba))?;
                let channels: Vec<String> = mats
                    .iter()
                    .zip(["R", "G", "B", "A"])
                    .filter(|(&k, _)| k < 5)
                    .map(|(&k, c)| format!("{c} {}", NAMES[k]))
                    .collect();
                note.push(format!("  {}: {}", name(&p), channels.join(", ")));
                written.files.push(p);
            }
            note.push("  Terrain Layers in this order: rock, scree, grass, sand, snow".into());
        }
        Engine::Godot => {
            let metres = Heights {
                values: grid.values.iter().map(|&v| desc.metres(v) as f32).collect(),
                ..*grid
            };
            let mdesc = DocumentDesc {
                units: Units::metres(plan.mean_spacing_m()),
                ..*desc
            };
            let path = with_suffix(out, ".exr");
            super::export::write_with_sidecar(
                &path,
                &metres,
                &mdesc,
                (0, 0),
                &WriteOptions::default(),
                &mut |_, _| {},
            )?;
            written.files.push(path.clone());
            let control: Vec<f32> = weights
                .chunks(5)
                .map(|t| f32::from_bits(terrain3d_control(t)))
                .collect();
            let cpath = with_suffix(out, "_control.exr");
            let c = Heights {
                values: control,
                ..*grid
            };
            super::formats::write(&cpath, &c, &WriteOptions::default())?;
            written.files.push(cpath.clone());
            note.push("Terrain3D > Import (Terrain3D tools, Importer):".into());
            note.push(format!(
                "  Height file: {} (32-bit EXR, metres)  Height scale: 1  Height offset: 0",
                name(&path)
            ));
            note.push(format!(
                "  Control file: {} (Terrain3D's control map: base and overlay texture ids, blend)",
                name(&cpath)
            ));
            note.push(format!("  Vertex spacing: {:.4}", plan.spacing_m[0]));
            note.push("  Texture list ids: 0 rock, 1 scree, 2 grass, 3 sand, 4 snow".into());
        }
    }
    if !extra.is_empty() {
        note.push(format!(
            "Maps ({w} x {h}, 32-bit EXR, rows north first, as the heights'):"
        ));
    }
    for (kind, values) in extra {
        let p = with_suffix(out, &format!("_{}.exr", kind.name()));
        let m = Heights {
            values: values.clone(),
            ..*grid
        };
        super::formats::write(&p, &m, &WriteOptions::default())?;
        note.push(format!("  {}: {} ({})", kind.name(), name(&p), kind.unit()));
        written.files.push(p);
    }
    write_note(out, &note, written)
}

fn write_image<P: image::Pixel<Subpixel = u8> + image::PixelWithColorType>(
    path: &Path,
    img: Option<image::ImageBuffer<P, Vec<u8>>>,
) -> Result<(), FileError> {
    crate::atomic_file::write_bytes_atomic(path, &png_bytes(path, img)?)
}

/// `img` as PNG file bytes (`path` names it in an error).
fn png_bytes<P: image::Pixel<Subpixel = u8> + image::PixelWithColorType>(
    path: &Path,
    img: Option<image::ImageBuffer<P, Vec<u8>>>,
) -> Result<Vec<u8>, FileError> {
    let img = img.expect("a buffer of the plan's size");
    let mut bytes = Vec::new();
    img.write_to(
        &mut std::io::Cursor::new(&mut bytes),
        image::ImageFormat::Png,
    )
    .map_err(|e| FileError::invalid(path, e.to_string()))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unreal's recommended sizes (Landscape Technical Guide) and Unity's 2^n + 1 resolutions:
    /// the nearest by ratio, and the crop's largest within.
    #[test]
    fn sizes_follow_the_engines_rules() {
        assert_eq!(nearest(&UNREAL_SIZES, 4096), 4033);
        assert_eq!(nearest(&UNREAL_SIZES, 1025), 1009);
        assert_eq!(nearest(&UNREAL_SIZES, 600), 505);
        assert_eq!(nearest(&UNREAL_SIZES, 20000), 8129);
        assert_eq!(nearest(&UNITY_SIZES, 4096), 4097);
        assert_eq!(nearest(&UNITY_SIZES, 700), 513);
        assert_eq!(nearest(&UNITY_SIZES, 800), 1025);
        assert_eq!(largest_within(&UNREAL_SIZES, 4096), Some(4033));
        assert_eq!(largest_within(&UNITY_SIZES, 1024), Some(513));
        assert_eq!(largest_within(&UNITY_SIZES, 20), None);
        for s in UNITY_SIZES {
            assert!((s - 1).is_power_of_two());
        }
    }

    #[test]
    fn plans_resample_or_crop_and_keep_the_extent_or_the_spacing() {
        // 4096² of 1 m to Unreal: 4033² resampled, corner samples kept: 4095 m between the
        // first and last sample either way.
        let p = Plan::new(Engine::Unreal, Fit::Resample, None, [4096, 4096], 1.0).unwrap();
        assert_eq!(p.size, [4033, 4033]);
        assert!((p.spacing_m[0] * 4032.0 - 4095.0).abs() < 1e-9);
        let c = Plan::new(Engine::Unreal, Fit::Crop, None, [4096, 4096], 1.0).unwrap();
        assert_eq!((c.size, c.spacing_m), ([4033, 4033], [1.0; 2]));
        assert_eq!((c.source.x, c.source.y), (31, 31));
        // Unity is square: a 1000x600 document goes to 1025² (resampled) or 513² (cropped).
        let u = Plan::new(Engine::Unity, Fit::Resample, None, [1000, 600], 2.0).unwrap();
        assert_eq!(u.size, [1025, 1025]);
        // Its edges stay where they were: 1998 m by 1198 m.
        assert!((u.spacing_m[0] * 1024.0 - 1998.0).abs() < 1e-9);
        assert!((u.spacing_m[1] * 1024.0 - 1198.0).abs() < 1e-9);
        // Unreal sizes each axis: 1000x600 goes to 1009x505.
        let r = Plan::new(Engine::Unreal, Fit::Resample, None, [1000, 600], 2.0).unwrap();
        assert_eq!(r.size, [1009, 505]);
        assert!((r.spacing_m[1] * 504.0 - 1198.0).abs() < 1e-9);
        let uc = Plan::new(Engine::Unity, Fit::Crop, None, [1000, 600], 2.0).unwrap();
        assert_eq!(uc.size, [513, 513]);
        // Sizes are checked by name.
        let e = Plan::new(Engine::Unity, Fit::Resample, Some(1024), [1000, 600], 2.0).unwrap_err();
        assert!(e.starts_with("--resolution: unity takes 33, 65"), "{e}");
        let g = Plan::new(Engine::Godot, Fit::Resample, None, [1000, 600], 2.0).unwrap();
        assert_eq!((g.size, g.spacing_m), ([1000, 600], [2.0; 2]));
        assert!(Plan::new(Engine::Unreal, Fit::Crop, None, [100, 100], 1.0).is_err());
    }

    /// World Partition: tiles of one recommended size sharing their edge samples (Landscape
    /// Technical Guide: a tiled heightmap's tiles are named _x{i}_y{j} and overlap by one).
    #[test]
    fn unreal_tiles_are_of_its_sizes_and_share_their_edges() {
        // 4096² of 1 m in 4x4: about 1024 a tile, nearest 1009; 4 x 1008 + 1 = 4033 in all.
        let p = Plan::tiled(
            Engine::Unreal,
            Fit::Resample,
            None,
            [4096, 4096],
            1.0,
            (4, 4),
        )
        .unwrap();
        assert_eq!(p.size, [4033, 4033]);
        assert_eq!(p.spacing_m, [4095.0 / 4032.0; 2]);
        let regions = p.tile_regions();
        assert_eq!(regions.len(), 16);
        assert_eq!(
            regions[1].2,
            Region {
                x: 1008,
                y: 0,
                width: 1009,
                height: 1009
            }
        );
        assert_eq!(regions[15].2.x + regions[15].2.width, 4033);
        // A non-square document: square tiles, each axis its own spacing.
        let r = Plan::tiled(
            Engine::Unreal,
            Fit::Resample,
            None,
            [8192, 4096],
            2.0,
            (4, 2),
        )
        .unwrap();
        assert_eq!(r.size, [4 * 2016 + 1, 2 * 2016 + 1]);
        assert_eq!(r.spacing_m, [2.0 * 8191.0 / 8064.0, 2.0 * 4095.0 / 4032.0]);
        // Cropped: the largest size within a tile's share, the spacing kept, centred.
        let c = Plan::tiled(Engine::Unreal, Fit::Crop, None, [4096, 4096], 1.0, (4, 4)).unwrap();
        assert_eq!(
            (c.size, c.spacing_m, c.source.x),
            ([4033, 4033], [1.0; 2], 31)
        );
        // --resolution is a tile's.
        let t = Plan::tiled(
            Engine::Unreal,
            Fit::Resample,
            Some(505),
            [4096, 4096],
            1.0,
            (2, 2),
        )
        .unwrap();
        assert_eq!(t.size, [1009, 1009]);
        assert!(t
            .describe([4096, 4096])
            .ends_with("written as 2x2 tiles of 505x505 that share their edge samples"));
        // Refused: tiles for another engine, a crop with no room, a size Unreal does not take.
        let e = Plan::tiled(
            Engine::Unity,
            Fit::Resample,
            None,
            [4096, 4096],
            1.0,
            (2, 2),
        )
        .unwrap_err();
        assert!(e.starts_with("--tiles: unity takes one file"), "{e}");
        let e = Plan::tiled(Engine::Unreal, Fit::Crop, None, [300, 300], 1.0, (4, 4)).unwrap_err();
        assert!(
            e.starts_with("--fit crop: the document (300x300) holds no 4x4 tiles"),
            "{e}"
        );
        assert!(Plan::tiled(
            Engine::Unreal,
            Fit::Resample,
            Some(500),
            [4096, 4096],
            1.0,
            (2, 2)
        )
        .is_err());
        assert!(Plan::tiled(
            Engine::Unreal,
            Fit::Resample,
            None,
            [4096, 4096],
            1.0,
            (0, 2)
        )
        .is_err());
    }

    #[test]
    fn resampling_keeps_corners_and_planes() {
        // A plane stays a plane; the corners stay where they were.
        let (w, h) = (7u32, 5u32);
        let v: Vec<f32> = (0..w * h)
            .map(|i| (i % w) as f32 * 2.0 + (i / w) as f32)
            .collect();
        let r = resample(&v, [w, h], [13, 9]);
        assert_eq!(r[0], v[0]);
        assert_eq!(r[12], v[6]);
        assert_eq!(r[13 * 9 - 1], v[(w * h - 1) as usize]);
        for y in 0..9 {
            for x in 0..13 {
                let want = x as f32 * 0.5 * 2.0 + y as f32 * 0.5;
                assert!((r[y * 13 + x] - want).abs() < 1e-5);
            }
        }
    }

    /// A rough terrain of `w` x `h` (no two texels alike).
    fn rough(w: u32, h: u32) -> Heights {
        let values = (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as f32, (i / w) as f32);
                (x * 0.071).sin() * 40.0 + (y * 0.053).cos() * 30.0 + (x * y * 0.0007).sin() * 9.0
            })
            .collect();
        Heights {
            width: w,
            height: h,
            values,
        }
    }

    /// Any window of a resampling, made from its source window alone, is the whole's window bit
    /// for bit, growing and shrinking.
    #[test]
    fn resampled_windows_are_the_wholes() {
        let g = rough(37, 23);
        for to in [[101, 61], [13, 9], [37, 5], [2, 2]] {
            let whole = resample(&g.values, [37, 23], to);
            for out in [
                Region::whole(to[0], to[1]),
                Region {
                    x: 1,
                    y: 0,
                    width: 1,
                    height: 1,
                },
                Region {
                    x: to[0] / 2,
                    y: to[1] / 3,
                    width: to[0] - to[0] / 2,
                    height: to[1] / 2,
                },
                Region {
                    x: to[0] - 1,
                    y: to[1] - 1,
                    width: 1,
                    height: 1,
                },
            ] {
                let src = resample_source([37, 23], to, out);
                assert!(
                    src.x + src.width <= 37 && src.y + src.height <= 23,
                    "{src:?}"
                );
                let v = super::super::tiles::crop(&g, src).unwrap().values;
                let got = resample_window(&v, src, [37, 23], to, out);
                assert_eq!(got, out.cut(&whole, to[0]), "{to:?} {out:?}");
            }
        }
    }

    /// An Unreal export made tile by tile in bands of a few rows, each from its own window of the
    /// document, has the heights, the material levels and the surface maps of the export made
    /// whole, bit for bit (the bands' apron gives their edge samples their neighbours), and the
    /// same range; resampled (grown) and cropped.
    #[test]
    fn unreal_tiles_made_in_bands_are_the_whole_exports() {
        let grid = rough(300, 200);
        let desc = DocumentDesc {
            units: Units::metres(5.0),
            ..DocumentDesc::for_heights(300, 200)
        };
        for (fit, tiles) in [
            (Fit::Resample, (2, 1)),
            (Fit::Crop, (1, 1)),
            (Fit::Resample, (1, 1)),
        ] {
            let plan = Plan::tiled(Engine::Unreal, fit, Some(127), [300, 200], 5.0, tiles).unwrap();
            let whole = plan.heights(&grid);
            let range = super::super::formats::min_max(&whole.values);
            let mut input = Held(&grid);
            let mut steps = 0;
            let got = unreal_range(&plan, &mut input, 3 * 127, &mut |n| steps += n).unwrap();
            assert_eq!(got, range);
            assert_eq!(steps, u64::from(plan.size[0] * plan.size[1]));
            let m = crate::render::look::Materials::default().on_document(&desc, range);
            let out_desc = plan.desc(&desc);
            let push = |r: Region| {
                crate::maps::MapsPush::new(&out_desc, [r.width, r.height], [r.x, r.y], range, &m)
                    .spaced(plan.spacing_m)
            };
            let all = crate::maps::cpu::maps_region(
                &whole.values,
                &push(Region::whole(plan.size[0], plan.size[1])),
            );
            let levels: Vec<u8> = all.weights.chunks(5).flat_map(to_levels).collect();
            let slope: Vec<f32> = all.surface(crate::maps::Surface::Slope).collect();
            let plan_c: Vec<f32> = all.surface(crate::maps::Surface::Plan).collect();
            for (_, _, r) in plan.tile_regions() {
                let bands = bands(&plan, r, 3 * u64::from(r.width));
                let t = unreal_tile(
                    &plan,
                    &mut input,
                    r,
                    bands,
                    &[MapKind::Slope, MapKind::Plan],
                    &[],
                    &push,
                    &mut crate::maps::kernels::Cpu,
                    &mut |_| {},
                )
                .unwrap();
                assert_eq!(
                    t.heights.values,
                    r.cut(&whole.values, plan.size[0]),
                    "{fit:?} {r:?}"
                );
                let want: Vec<u8> = (r.y..r.y + r.height)
                    .flat_map(|y| {
                        let at = (y * plan.size[0] + r.x) as usize * 5;
                        levels[at..at + r.width as usize * 5].to_vec()
                    })
                    .collect();
                assert!(t.levels == want, "{fit:?} {r:?}: levels");
                assert_eq!(t.extra[0].1, r.cut(&slope, plan.size[0]));
                assert_eq!(t.extra[1].1, r.cut(&plan_c, plan.size[0]));
            }
        }
    }

    #[test]
    fn the_control_map_packs_base_overlay_and_blend_as_terrain3d_reads_them() {
        let c = terrain3d_control(&[0.1, 0.0, 0.6, 0.3, 0.0]);
        assert_eq!(c >> 27 & 0x1F, 2, "grass is the base");
        assert_eq!(c >> 22 & 0x1F, 3, "sand the overlay");
        assert_eq!(c >> 14 & 0xFF, (0.3f32 / 0.9 * 255.0).round() as u32);
        assert_eq!(c & 0x3FFF, 0, "no uv, hole, navigation or autoshader bits");
        assert!(f32::from_bits(c).is_finite());
    }
}

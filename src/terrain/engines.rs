//! Exports that engines take as they are (docs/engines.md): each engine's heightmap sizes and the
//! fit to them (resampled or cropped), its scales, the files it imports (heights, material weight
//! or splat maps, Terrain3D's control map) and a note of exactly what to enter in its import
//! dialog. The material weights come from [`crate::maps`]: what the viewport shows.

use super::formats::{Heights, WriteOptions};
use crate::atomic_file::FileError;
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

/// The most samples a tiled export makes: its heights, weights and levels are in memory at once
/// (about 28 bytes a sample, 7.5 GB here; 4 x 4 tiles of 4033 fit).
pub const MAX_TILED_SAMPLES: u64 = 1 << 28;

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
        let src = self.source.cut(&grid.values, grid.width);
        let from = [self.source.width, self.source.height];
        let values = match from == self.size {
            true => src,
            false => resample(&src, from, self.size),
        };
        Heights {
            width: self.size[0],
            height: self.size[1],
            values,
        }
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
    if u64::from(total[0]) * u64::from(total[1]) > MAX_TILED_SAMPLES {
        return Err(format!(
            "--tiles: {cols}x{rows} tiles of {s} make a {}x{} landscape, past the {} samples an \
             export holds in memory: fewer or smaller tiles",
            total[0], total[1], MAX_TILED_SAMPLES
        ));
    }
    Ok(total)
}

/// `v` (`from`, row-major) resampled bilinearly to `to`, corner samples kept (sample i of n lies
/// at i·(m − 1)/(n − 1) of the m source samples).
pub fn resample(v: &[f32], from: [u32; 2], to: [u32; 2]) -> Vec<f32> {
    let [fw, fh] = from.map(|s| s as usize);
    let [tw, th] = to.map(|s| s as usize);
    let coord = |i: usize, n: usize, m: usize| -> (usize, f32) {
        let c = match n > 1 {
            true => i as f64 * (m - 1) as f64 / (n - 1) as f64,
            false => 0.0,
        };
        let i0 = (c.floor() as usize).min(m.saturating_sub(2));
        (i0, (c - i0 as f64) as f32)
    };
    let mut out = Vec::with_capacity(tw * th);
    for y in 0..th {
        let (y0, fy) = coord(y, th, fh);
        let y1 = (y0 + 1).min(fh - 1);
        for x in 0..tw {
            let (x0, fx) = coord(x, tw, fw);
            let x1 = (x0 + 1).min(fw - 1);
            let top = v[y0 * fw + x0] + (v[y0 * fw + x1] - v[y0 * fw + x0]) * fx;
            let bottom = v[y1 * fw + x0] + (v[y1 * fw + x1] - v[y1 * fw + x0]) * fx;
            out.push(top + (bottom - top) * fy);
        }
    }
    out
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

/// Exports the whole `grid` of document `desc` for `req.engine` to files named after `out`
/// (`DIR/NAME`), the weight maps by `materials` (anchored on the exported heights as the
/// viewport anchors them on the document's) computed by `weigh` (the GPU kernel or its twin,
/// [`crate::maps`]). `stored` holds the grids of the stored maps asked for
/// ([`MapKind::stored`]), of `grid`'s size; one asked for and not given is refused before
/// anything is written.
pub fn export(
    grid: &Heights,
    desc: &DocumentDesc,
    req: Request,
    materials: &crate::render::look::Materials,
    stored: &[(MapKind, Heights)],
    out: &Path,
    weigh: impl FnOnce(&[f32], &crate::maps::MapsPush) -> Result<crate::maps::Maps, String>,
) -> Result<Written, ExportError> {
    let size = [grid.width, grid.height];
    let plan = Plan::tiled(
        req.engine,
        req.fit,
        req.resolution,
        size,
        desc.texel_size(),
        req.tiles.unwrap_or((1, 1)),
    )
    .map_err(ExportError::Plan)?;
    if let Some(k) = req
        .maps
        .iter()
        .find(|k| k.stored() && !stored.iter().any(|(s, _)| s == *k))
    {
        return Err(ExportError::Plan(format!(
            "--maps {}: only a .scarp project holds it",
            k.name()
        )));
    }
    let out_desc = plan.desc(desc);
    let heights = plan.heights(grid);
    let range = super::formats::min_max(&heights.values);
    // Anchored as the viewport anchors them: on the document's own units.
    let m = materials.on_document(desc, range);
    let push =
        crate::maps::MapsPush::new(&out_desc, plan.size, [0, 0], range, &m).spaced(plan.spacing_m);
    let maps = weigh(&heights.values, &push).map_err(ExportError::Weights)?;
    // Drainage and wetness share one D8 accumulation.
    let area = std::cell::OnceCell::new();
    let extra: Vec<(MapKind, Vec<f32>)> = req
        .maps
        .iter()
        .map(|&k| match stored.iter().find(|(s, _)| *s == k) {
            Some((_, g)) => (k, plan.heights(g).values),
            None => (k, derived(k, &heights, &out_desc, &maps, &area)),
        })
        .collect();
    let o = Outputs {
        plan: &plan,
        desc: &out_desc,
        grid: &heights,
        weights: &maps.weights,
        extra: &extra,
        doc_size: size,
    };
    Ok(write(&o, out)?)
}

/// Map `kind` of the exported `heights` (of `desc`) from the kernel's `maps`; `area` keeps the
/// D8 drainage area (m²) once made.
fn derived(
    kind: MapKind,
    heights: &Heights,
    desc: &DocumentDesc,
    maps: &crate::maps::Maps,
    area: &std::cell::OnceCell<Vec<f64>>,
) -> Vec<f32> {
    use crate::maps::Surface;
    let slope = || maps.surface(Surface::Slope);
    let area = || {
        area.get_or_init(|| {
            crate::maps::flow::drainage(&heights.values, [heights.width, heights.height], desc)
        })
    };
    match kind {
        MapKind::Slope => slope().collect(),
        MapKind::Curvature => maps.surface(Surface::Curvature).collect(),
        MapKind::Profile => maps.surface(Surface::Profile).collect(),
        MapKind::Plan => maps.surface(Surface::Plan).collect(),
        MapKind::Drainage => area().iter().map(|&a| a as f32).collect(),
        MapKind::Wetness => crate::maps::flow::wetness(area(), slope(), desc.texel_size()),
        MapKind::Wear | MapKind::Deposits => unreachable!("stored maps are given, not derived"),
    }
}

/// The files an export wrote.
#[derive(Debug, Default)]
pub struct Written {
    pub files: Vec<PathBuf>,
    /// The note of what to enter in the engine's import dialog.
    pub note: PathBuf,
}

/// What an export writes.
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

/// Writes `o` to files named after `out` (`DIR/NAME`): the heights, the maps and `NAME.txt`.
/// A failure removes what it wrote.
pub fn write(o: &Outputs, out: &Path) -> Result<Written, FileError> {
    let mut written = Written::default();
    let result = write_files(o, out, &mut written);
    if result.is_err() {
        for f in written.files.iter().chain([&written.note]) {
            let _ = std::fs::remove_file(f);
            let _ = std::fs::remove_file(super::sidecar::path_of(f));
        }
    }
    result.map(|()| written)
}

fn with_suffix(out: &Path, suffix: &str) -> PathBuf {
    let mut name = out.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    out.with_file_name(name)
}

fn write_files(o: &Outputs, out: &Path, written: &mut Written) -> Result<(), FileError> {
    let &Outputs {
        plan,
        desc,
        grid,
        weights,
        extra,
        doc_size,
    } = o;
    let [w, h] = plan.size;
    let levels: Vec<u8> = weights.chunks(5).flat_map(to_levels).collect();
    // A flat document still gets a range (one height unit) its integer values span.
    let (lo, hi) = super::formats::default_range(&grid.values);
    let (z0, z1) = (desc.metres(lo), desc.metres(hi));
    let name = |p: &Path| {
        p.file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned()
    };
    let mut note = vec![
        format!("Scarp export for {}", plan.engine.name()),
        format!("Source: {}", plan.describe(doc_size)),
        format!("Heights: {z0:.3} m to {z1:.3} m"),
    ];
    match plan.engine {
        Engine::Unreal => {
            let opts = WriteOptions {
                range: Some((lo, hi)),
                bits: Some(16),
                ..WriteOptions::default()
            };
            let tiled = plan.tiles != (1, 1);
            // One file, or tiles named NAME_x{i}_y{j}: Unreal finds a tile set by that suffix.
            let tile = |i: u32, j: u32| match tiled {
                true => format!("_x{i}_y{j}"),
                false => String::new(),
            };
            let regions = plan.tile_regions();
            for &(i, j, r) in &regions {
                let path = with_suffix(out, &format!("{}.png", tile(i, j)));
                let part = super::tiles::crop(grid, r).expect("a tile inside the plan");
                super::export::write_with_sidecar(
                    &path,
                    &part,
                    desc,
                    (r.x, r.y),
                    &opts,
                    &mut |_, _| {},
                )?;
                written.files.push(path);
            }
            let z = (z1 - z0) * 100.0 / 512.0;
            note.push("Landscape mode > Manage > New > Import from File:".into());
            let first = with_suffix(out, &format!("{}.png", tile(0, 0)));
            match tiled {
                true => {
                    let (c, r) = plan.tiles;
                    let s = regions[0].2.width;
                    note.push(format!(
                        "  Heightmap File: {} - the first of {c} x {r} tiles of {s} x {s} (16-bit PNG, \
                         neighbouring tiles share their edge samples: {w} x {h} in all; the \
                         importer finds the others by their _x{{i}}_y{{j}} names)",
                        name(&first)
                    ));
                    note.push(
                        "  World Partition: on (Enable World Partition in the New Landscape panel)"
                            .into(),
                    );
                }
                false => note.push(format!(
                    "  Heightmap File: {} ({w} x {h}, 16-bit PNG)",
                    name(&first)
                )),
            }
            note.push(format!(
                "  Location: X 0  Y 0  Z {:.3}",
                0.5 * (z0 + z1) * 100.0
            ));
            note.push(format!(
                "  Scale: X {:.4}  Y {:.4}  Z {z:.4}",
                plan.spacing_m[0] * 100.0,
                plan.spacing_m[1] * 100.0
            ));
            note.push("  Layers (weight-blended; Import Layers, one file each):".into());
            for (k, m) in NAMES.iter().enumerate() {
                for &(i, j, r) in &regions {
                    let p = with_suffix(out, &format!("_{m}{}.png", tile(i, j)));
                    let gray: Vec<u8> = (r.y..r.y + r.height)
                        .flat_map(|y| {
                            (r.x..r.x + r.width).map(move |x| y as usize * w as usize + x as usize)
                        })
                        .map(|t| levels[t * 5 + k])
                        .collect();
                    write_image(&p, image::GrayImage::from_raw(r.width, r.height, gray))?;
                    written.files.push(p);
                }
                let p = with_suffix(out, &format!("_{m}{}.png", tile(0, 0)));
                note.push(format!("    {m}: {}", name(&p)));
            }
        }
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
            "Maps ({w} x {h}, 32-bit EXR, rows north first, as the PNG heights'):"
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
    let notep = out.with_file_name(format!("{}.txt", name(out)));
    let text = note.join("\n") + "\n";
    crate::atomic_file::write_bytes_atomic(&notep, text.as_bytes())?;
    written.note = notep;
    Ok(())
}

fn write_image<P: image::Pixel<Subpixel = u8> + image::PixelWithColorType>(
    path: &Path,
    img: Option<image::ImageBuffer<P, Vec<u8>>>,
) -> Result<(), FileError> {
    let img = img.expect("a buffer of the plan's size");
    let mut bytes = Vec::new();
    img.write_to(
        &mut std::io::Cursor::new(&mut bytes),
        image::ImageFormat::Png,
    )
    .map_err(|e| FileError::invalid(path, e.to_string()))?;
    crate::atomic_file::write_bytes_atomic(path, &bytes)
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

//! Height files in the formats engines use, read and written through well-kept crates (`image`
//! for PNG, `exr`, `tiff`; raw files by hand, they have no structure):
//!
//! | extension | format | values |
//! |---|---|---|
//! | `.png` | PNG gray, 16-bit (or 8 with `bits = 8`) | integers mapped onto a height range |
//! | `.r16`, `.raw` | raw 16-bit unsigned, little- or big-endian, row-major | mapped onto a range |
//! | `.r32` | raw 32-bit float, little-endian, row-major | heights as they are |
//! | `.exr` | OpenEXR, one channel (`Y`, else `R`, else the only one), f16/f32/u32 | as they are |
//! | `.tif`, `.tiff` | TIFF gray, 32-bit float (or 16-bit with `bits = 16`) | float as is, 16-bit mapped |
//!
//! Integer formats map stored value v of maximum M to `min + v / M × (max − min)`: on reading,
//! `range` (default 0..1); on writing, `range` or else the data's own min..max (values outside a
//! given range are clamped and counted). Raw files have no header: their size is given, or
//! inferred when the file is square. Every read checks the size against [`MAX_SIDE`] and
//! [`MAX_TEXELS`] *before* allocating (dimension bombs), rejects empty, truncated, oversized and
//! non-finite data with a one-line error naming the file, and never panics; every write is atomic
//! (`crate::atomic_file`).

use super::georef::{self, GeoTags, Georef};
use crate::atomic_file::{write_atomic, FileError};
use std::io::{BufReader, Read, Seek, Write};
use std::path::Path;

/// Largest side of a height file.
pub const MAX_SIDE: u32 = 65536;
/// Most texels of a height file (1 GiB of f32).
pub const MAX_TEXELS: u64 = 1 << 28;

/// Byte order of raw 16-bit files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Endian {
    #[default]
    Little,
    Big,
}

/// A height file format, from the extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    Png,
    Raw16,
    R32,
    Exr,
    Tiff,
    /// SRTM `.hgt`: big-endian signed 16-bit metres, 1201² or 3601², void -32768 (read only).
    Hgt,
}

impl FileKind {
    pub const EXTENSIONS: &'static str = ".png, .r16, .raw, .r32, .exr, .tif, .tiff, .hgt";

    /// The format `path`'s extension names.
    pub fn of(path: &Path) -> Result<Self, FileError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("png") => Ok(Self::Png),
            Some("r16" | "raw") => Ok(Self::Raw16),
            Some("r32") => Ok(Self::R32),
            Some("exr") => Ok(Self::Exr),
            Some("tif" | "tiff") => Ok(Self::Tiff),
            Some("hgt") => Ok(Self::Hgt),
            _ => Err(FileError::invalid(
                path,
                format!("unknown height file format (use {})", Self::EXTENSIONS),
            )),
        }
    }

    /// Whether values are integers mapped onto a height range.
    pub fn is_integer(self, bits: u8) -> bool {
        match self {
            FileKind::Png | FileKind::Raw16 => true,
            FileKind::Tiff => bits == 16,
            FileKind::R32 | FileKind::Exr | FileKind::Hgt => false,
        }
    }
}

/// A grid of heights, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct Heights {
    pub width: u32,
    pub height: u32,
    pub values: Vec<f32>,
}

/// How to read a height file.
#[derive(Clone, Copy, Debug)]
pub struct ReadOptions {
    /// Size of raw files (else inferred when square); checked against other files' headers.
    pub size: Option<(u32, u32)>,
    /// Heights of the lowest and highest integer value.
    pub range: (f32, f32),
    pub endian: Endian,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            size: None,
            range: (0.0, 1.0),
            endian: Endian::Little,
        }
    }
}

/// How to write a height file.
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteOptions {
    /// Heights of the lowest and highest integer value; None: the data's min..max.
    pub range: Option<(f32, f32)>,
    pub endian: Endian,
    /// Bits per value where the format has a choice: PNG 8 or 16 (default 16), TIFF 16 or 32
    /// (default 32, float).
    pub bits: Option<u8>,
    /// Where the grid lies, written into a GeoTIFF's tags.
    pub geo: Option<crate::pages::GeoPlacement>,
}

/// What a write did.
#[derive(Clone, Debug, PartialEq)]
pub struct WriteReport {
    pub kind: FileKind,
    pub bits: u8,
    /// The range integer values were mapped from (None for float formats).
    pub range: Option<(f32, f32)>,
    /// Heights outside `range`, clamped.
    pub clamped: u64,
}

/// Progress callback: (units done, units in all).
pub type Progress<'a> = &'a mut dyn FnMut(u64, u64);

/// Checks a size against the limits.
pub fn check_size(width: u32, height: u32) -> Result<(), String> {
    if width == 0 || height == 0 {
        return Err(format!("{width}x{height} has no texels"));
    }
    if width > MAX_SIDE || height > MAX_SIDE {
        return Err(format!(
            "{width}x{height} exceeds the largest side, {MAX_SIDE}"
        ));
    }
    if u64::from(width) * u64::from(height) > MAX_TEXELS {
        return Err(format!("{width}x{height} is more than {MAX_TEXELS} texels"));
    }
    Ok(())
}

fn check_range(range: (f32, f32)) -> Result<(), String> {
    if !(range.0.is_finite() && range.1.is_finite() && range.0 < range.1) {
        return Err(format!(
            "range {},{} must be two finite numbers, min < max",
            range.0, range.1
        ));
    }
    Ok(())
}

fn check_finite(values: &[f32], width: u32) -> Result<(), String> {
    match first_non_finite(values.iter().copied()) {
        Some((i, v)) => Err(format!(
            "non-finite height ({v}) at texel ({}, {})",
            i as u64 % u64::from(width),
            i as u64 / u64::from(width)
        )),
        None => Ok(()),
    }
}

/// The first value of `values` that is not finite (NaN or Inf), and its index.
pub fn first_non_finite(values: impl IntoIterator<Item = f32>) -> Option<(usize, f32)> {
    values.into_iter().enumerate().find(|(_, v)| !v.is_finite())
}

/// Why `.hgt` is not an output.
pub const HGT_NOT_WRITTEN: &str =
    "SRTM .hgt files are read, not written (write .tif or .r32 to keep metres)";

/// What reading a file did beyond decoding it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadReport {
    /// Texels holding the file's nodata value (GeoTIFF `GDAL_NODATA`, SRTM voids) that were
    /// filled from their neighbours.
    pub voids_filled: u64,
    /// Where the file says it lies (a GeoTIFF's georeference, an SRTM tile's name).
    pub georef: Option<Georef>,
}

/// Reads the height file at `path` (format from the extension).
pub fn read(path: &Path, options: &ReadOptions) -> Result<Heights, FileError> {
    read_with_progress(path, options, &mut |_, _| {})
}

/// [`read`], reporting progress (raw files report rows; others start and end).
pub fn read_with_progress(
    path: &Path,
    options: &ReadOptions,
    progress: Progress<'_>,
) -> Result<Heights, FileError> {
    read_reporting(path, options, progress).map(|(h, _)| h)
}

/// [`read_with_progress`], also saying what was done beyond decoding (filled voids).
pub fn read_reporting(
    path: &Path,
    options: &ReadOptions,
    progress: Progress<'_>,
) -> Result<(Heights, ReadReport), FileError> {
    let at = |problem: String| FileError::invalid(path, problem);
    let kind = FileKind::of(path)?;
    // Devices and pipes have no size to check against the limits (think /dev/zero), and a FIFO
    // would block: refused without waiting.
    let file = crate::atomic_file::open_regular(path).map_err(FileError::io(path))?;
    let len = file.metadata().map_err(FileError::io(path))?.len();
    let (heights, mut report) = read_source_reporting(
        BufReader::with_capacity(1 << 20, file),
        len,
        kind,
        options,
        progress,
    )
    .map_err(at)?;
    if kind == FileKind::Hgt {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        report.georef = name.and_then(|n| georef::hgt(&n, heights.width));
    }
    Ok((heights, report))
}

/// Reads a height file held in memory (`kind` as its extension would say): what the fuzz
/// targets call.
pub fn read_bytes(bytes: &[u8], kind: FileKind, options: &ReadOptions) -> Result<Heights, String> {
    read_source_reporting(
        std::io::Cursor::new(bytes),
        bytes.len() as u64,
        kind,
        options,
        &mut |_, _| {},
    )
    .map(|(h, _)| h)
}

/// Reads `len` bytes of `kind` from `source`; errors without the file name.
fn read_source_reporting<R: std::io::BufRead + Seek + Send>(
    source: R,
    len: u64,
    kind: FileKind,
    options: &ReadOptions,
    progress: Progress<'_>,
) -> Result<(Heights, ReadReport), String> {
    check_range(options.range)?;
    if len == 0 {
        return Err("empty file".into());
    }
    let mut georef = None;
    let (mut heights, voids) = match kind {
        FileKind::Raw16 | FileKind::R32 => {
            (read_raw(source, len, kind, options, progress)?, Vec::new())
        }
        FileKind::Png => (read_png(source, options)?, Vec::new()),
        FileKind::Exr => (read_exr(source)?, Vec::new()),
        FileKind::Tiff => {
            let (heights, voids, g) = read_tiff(source, options)?;
            georef = g;
            (heights, voids)
        }
        FileKind::Hgt => read_hgt(source, len)?,
    };
    let voids_filled = fill_voids(&mut heights, &voids)?;
    if let Some((w, h)) = options.size {
        if (w, h) != (heights.width, heights.height) {
            return Err(format!(
                "is {}x{}, but --size says {w}x{h}",
                heights.width, heights.height
            ));
        }
    }
    check_finite(&heights.values, heights.width)?;
    Ok((
        heights,
        ReadReport {
            voids_filled,
            georef,
        },
    ))
}

/// Fills the texels listed in `voids` (nodata) from their valid 4-neighbours, ring by ring
/// inwards, so a hole takes the heights around it; returns how many were filled.
fn fill_voids(h: &mut Heights, voids: &[usize]) -> Result<u64, String> {
    if voids.is_empty() {
        return Ok(0);
    }
    if voids.len() == h.values.len() {
        return Err("every texel is nodata".into());
    }
    let (w, hh) = (h.width as usize, h.height as usize);
    let mut valid = vec![true; h.values.len()];
    for &i in voids {
        valid[i] = false;
    }
    let mut left: Vec<usize> = voids.to_vec();
    while !left.is_empty() {
        let mut filled = Vec::new();
        let mut rest = Vec::new();
        for &i in &left {
            let (x, y) = (i % w, i / w);
            let mut sum = 0.0f64;
            let mut n = 0;
            for (dx, dy) in [(-1i64, 0i64), (1, 0), (0, -1), (0, 1)] {
                let (nx, ny) = (x as i64 + dx, y as i64 + dy);
                if nx >= 0 && ny >= 0 && (nx as usize) < w && (ny as usize) < hh {
                    let j = ny as usize * w + nx as usize;
                    if valid[j] {
                        sum += f64::from(h.values[j]);
                        n += 1;
                    }
                }
            }
            if n > 0 {
                filled.push((i, (sum / f64::from(n)) as f32));
            } else {
                rest.push(i);
            }
        }
        for &(i, v) in &filled {
            h.values[i] = v;
            valid[i] = true;
        }
        left = rest;
    }
    Ok(voids.len() as u64)
}

/// SRTM `.hgt`: a square of big-endian signed 16-bit metres (1201² for 3", 3601² for 1"), rows
/// from the north; -32768 marks a void.
fn read_hgt<R: Read>(mut source: R, len: u64) -> Result<(Heights, Vec<usize>), String> {
    let side = match len {
        2_884_802 => 1201,
        25_934_402 => 3601,
        _ => {
            return Err(format!(
            "{len} bytes: an SRTM .hgt is 1201x1201 (2884802 bytes) or 3601x3601 (25934402 bytes)"
        ))
        }
    };
    let mut bytes = vec![0u8; len as usize];
    source
        .read_exact(&mut bytes)
        .map_err(|e| format!("truncated: {e}"))?;
    let mut voids = Vec::new();
    let values = bytes
        .chunks_exact(2)
        .enumerate()
        .map(|(i, c)| match i16::from_be_bytes([c[0], c[1]]) {
            -32768 => {
                voids.push(i);
                0.0
            }
            v => f32::from(v),
        })
        .collect();
    Ok((
        Heights {
            width: side,
            height: side,
            values,
        },
        voids,
    ))
}

/// Size of a raw file of `len` bytes and `texel` bytes per value.
fn raw_size(len: u64, texel: u64, size: Option<(u32, u32)>) -> Result<(u32, u32), String> {
    match size {
        Some((w, h)) => {
            check_size(w, h)?;
            let expected = u64::from(w) * u64::from(h) * texel;
            if len != expected {
                return Err(format!(
                    "{len} bytes, but {w}x{h} needs {expected} ({texel} bytes a texel)"
                ));
            }
            Ok((w, h))
        }
        None => {
            if len % texel != 0 {
                return Err(format!(
                    "{len} bytes is not a whole number of {texel}-byte texels"
                ));
            }
            let n = len / texel;
            let side = (n as f64).sqrt().round() as u64;
            if side * side != n {
                return Err(format!(
                    "{n} texels is not a square: give the size (--size WxH)"
                ));
            }
            let side = u32::try_from(side).map_err(|_| format!("{side} texels a side"))?;
            check_size(side, side)?;
            Ok((side, side))
        }
    }
}

fn read_raw<R: Read>(
    mut reader: R,
    len: u64,
    kind: FileKind,
    options: &ReadOptions,
    progress: Progress<'_>,
) -> Result<Heights, String> {
    let texel = if kind == FileKind::R32 { 4 } else { 2 };
    let (w, h) = raw_size(len, texel, options.size)?;
    let mut values = Vec::with_capacity(w as usize * h as usize);
    let mut row = vec![0u8; w as usize * texel as usize];
    let (lo, hi) = options.range;
    for y in 0..h {
        reader
            .read_exact(&mut row)
            .map_err(|e| format!("row {y}: {e}"))?;
        match kind {
            FileKind::R32 => values.extend(
                row.chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            ),
            _ => values.extend(row.chunks_exact(2).map(|c| {
                let v = match options.endian {
                    Endian::Little => u16::from_le_bytes([c[0], c[1]]),
                    Endian::Big => u16::from_be_bytes([c[0], c[1]]),
                };
                lo + f32::from(v) / 65535.0 * (hi - lo)
            })),
        }
        if y % 256 == 0 || y + 1 == h {
            progress(u64::from(y) + 1, u64::from(h));
        }
    }
    Ok(Heights {
        width: w,
        height: h,
        values,
    })
}

/// Decodes a PNG; the limits are checked against the header before any pixel is allocated.
fn read_png<R: std::io::BufRead + Seek>(
    source: R,
    options: &ReadOptions,
) -> Result<Heights, String> {
    let mut reader = image::ImageReader::with_format(source, image::ImageFormat::Png);
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(MAX_TEXELS * 2);
    reader.limits(limits);
    let img = reader
        .decode()
        .map_err(|e| format!("not a readable PNG: {e}"))?;
    let (w, h) = (img.width(), img.height());
    check_size(w, h)?;
    let (lo, hi) = options.range;
    let values: Vec<f32> = match img {
        image::DynamicImage::ImageLuma8(g) => g
            .into_raw()
            .into_iter()
            .map(|v| lo + f32::from(v) / 255.0 * (hi - lo))
            .collect(),
        image::DynamicImage::ImageLuma16(g) => g
            .into_raw()
            .into_iter()
            .map(|v| lo + f32::from(v) / 65535.0 * (hi - lo))
            .collect(),
        other => {
            return Err(format!(
                "{:?} pixels: height PNGs must be grayscale, 8 or 16 bits",
                other.color()
            ))
        }
    };
    Ok(Heights {
        width: w,
        height: h,
        values,
    })
}

fn read_exr<R: Read + Seek + Send>(mut source: R) -> Result<Heights, String> {
    use exr::prelude::*;
    let meta = exr::meta::MetaData::read_from_buffered(&mut source, false)
        .map_err(|e| format!("not a readable OpenEXR file: {e}"))?;
    let header = meta
        .headers
        .first()
        .ok_or("an OpenEXR file without layers")?;
    let size = header.layer_size;
    let (w, h) = (
        u32::try_from(size.width()).map_err(|_| "width out of range".to_string())?,
        u32::try_from(size.height()).map_err(|_| "height out of range".to_string())?,
    );
    check_size(w, h)?;
    // The decoder allocates every channel of every layer: bound them all, not just the size.
    let samples: u64 = meta
        .headers
        .iter()
        .map(|h| {
            let s = h.layer_size;
            (s.width() as u64)
                .saturating_mul(s.height() as u64)
                .saturating_mul(h.channels.list.len() as u64)
        })
        .fold(0u64, u64::saturating_add);
    if samples > MAX_TEXELS {
        return Err(format!(
            "{samples} samples in all layers and channels, more than {MAX_TEXELS}"
        ));
    }
    source
        .seek(std::io::SeekFrom::Start(0))
        .map_err(|e| e.to_string())?;
    let image = read()
        .no_deep_data()
        .largest_resolution_level()
        .all_channels()
        .first_valid_layer()
        .all_attributes()
        .from_buffered(source)
        .map_err(|e| format!("not a readable OpenEXR file: {e}"))?;
    let channels = &image.layer_data.channel_data.list;
    let pick = ["Y", "R"]
        .iter()
        .find_map(|n| channels.iter().find(|c| c.name.to_string() == *n))
        .or(if channels.len() == 1 {
            channels.first()
        } else {
            None
        })
        .ok_or_else(|| {
            format!(
                "{} channels and none named Y or R: which one is the height?",
                channels.len()
            )
        })?;
    let values: Vec<f32> = match &pick.sample_data {
        FlatSamples::F16(v) => v.iter().map(|x| x.to_f32()).collect(),
        FlatSamples::F32(v) => v.clone(),
        FlatSamples::U32(v) => v.iter().map(|&x| x as f32).collect(),
    };
    if values.len() != w as usize * h as usize {
        return Err(format!(
            "channel {} holds {} samples for {w}x{h}",
            pick.name,
            values.len()
        ));
    }
    Ok(Heights {
        width: w,
        height: h,
        values,
    })
}

/// A TIFF's heights, the texels holding its nodata value, and its georeference.
type Tiff = (Heights, Vec<usize>, Option<Georef>);

/// The tags that place a GeoTIFF (absent ones None).
fn geo_tags<R: Read + Seek>(dec: &mut tiff::decoder::Decoder<R>) -> GeoTags {
    use tiff::tags::Tag;
    let mut f64s = |tag| dec.get_tag_f64_vec(tag).ok();
    let pixel_scale = f64s(Tag::ModelPixelScaleTag);
    let tiepoint = f64s(Tag::ModelTiepointTag);
    let transformation = f64s(Tag::ModelTransformationTag);
    GeoTags {
        pixel_scale,
        tiepoint,
        transformation,
        keys: dec.get_tag_u16_vec(Tag::GeoKeyDirectoryTag).ok(),
    }
}

fn read_tiff<R: Read + Seek>(source: R, options: &ReadOptions) -> Result<Tiff, String> {
    use tiff::decoder::{Decoder, DecodingResult};
    let mut limits = tiff::decoder::Limits::default();
    limits.decoding_buffer_size = (MAX_TEXELS * 4) as usize;
    let mut dec = Decoder::new(source)
        .map_err(|e| format!("not a readable TIFF: {e}"))?
        .with_limits(limits);
    let (w, h) = dec
        .dimensions()
        .map_err(|e| format!("not a readable TIFF: {e}"))?;
    check_size(w, h)?;
    let color = dec
        .colortype()
        .map_err(|e| format!("not a readable TIFF: {e}"))?;
    if !matches!(
        color,
        tiff::ColorType::Gray(8) | tiff::ColorType::Gray(16) | tiff::ColorType::Gray(32)
    ) {
        return Err(format!(
            "{color:?} pixels: height TIFFs must be one gray channel (8/16-bit or 32-bit float)"
        ));
    }
    // GDAL writes the nodata value as an ASCII tag (GDAL_NODATA, 42113).
    let nodata: Option<f64> = dec
        .get_tag_ascii_string(tiff::tags::Tag::GdalNodata)
        .ok()
        .and_then(|s| s.trim().trim_end_matches('\0').parse().ok());
    let tags = geo_tags(&mut dec);
    let samples = dec
        .read_image()
        .map_err(|e| format!("not a readable TIFF: {e}"))?;
    // 8 and 16-bit unsigned samples span the range asked for; others are elevations.
    let elevations = !matches!(samples, DecodingResult::U8(_) | DecodingResult::U16(_));
    let georef = tags.georef(w, h, elevations)?;
    let (lo, hi) = options.range;
    let values: Vec<f32> = match samples {
        DecodingResult::U8(v) => v
            .into_iter()
            .map(|x| lo + f32::from(x) / 255.0 * (hi - lo))
            .collect(),
        DecodingResult::U16(v) => v
            .into_iter()
            .map(|x| lo + f32::from(x) / 65535.0 * (hi - lo))
            .collect(),
        DecodingResult::F32(v) => v,
        // Signed and 32-bit integer samples are elevations (metres, as survey agencies ship
        // them): read as they are.
        DecodingResult::I16(v) => v.into_iter().map(f32::from).collect(),
        DecodingResult::I32(v) => v.into_iter().map(|x| x as f32).collect(),
        DecodingResult::U32(v) => v.into_iter().map(|x| x as f32).collect(),
        _ => {
            return Err(
                "unsupported sample type (use 8/16-bit unsigned, 16/32-bit signed or 32-bit float gray)"
                    .into(),
            )
        }
    };
    let voids: Vec<usize> = match nodata {
        Some(nd) => values
            .iter()
            .enumerate()
            .filter(|(_, &v)| f64::from(v) == nd || (nd.is_nan() && v.is_nan()))
            .map(|(i, _)| i)
            .collect(),
        None => Vec::new(),
    };
    if values.len() != w as usize * h as usize {
        return Err(format!("{} samples for {w}x{h}", values.len()));
    }
    Ok((
        Heights {
            width: w,
            height: h,
            values,
        },
        voids,
        georef,
    ))
}

/// Maps `values` onto 0..=max over `range` (clamping, counted).
fn quantize(values: &[f32], range: (f32, f32), max: f32) -> (Vec<u32>, u64) {
    let (lo, hi) = range;
    let mut clamped = 0;
    let q = values
        .iter()
        .map(|&h| {
            let t = (h - lo) / (hi - lo);
            if !(0.0..=1.0).contains(&t) {
                clamped += 1;
            }
            (t.clamp(0.0, 1.0) * max + 0.5).floor() as u32
        })
        .collect();
    (q, clamped)
}

/// Writes `heights` to `path` atomically (format from the extension).
pub fn write(
    path: &Path,
    heights: &Heights,
    options: &WriteOptions,
) -> Result<WriteReport, FileError> {
    write_with_progress(path, heights, options, &mut |_, _| {})
}

/// [`write`], reporting progress (raw files report rows).
pub fn write_with_progress(
    path: &Path,
    heights: &Heights,
    options: &WriteOptions,
    progress: Progress<'_>,
) -> Result<WriteReport, FileError> {
    let mut report = check_write(path, heights, options)?;
    let WriteReport {
        kind, bits, range, ..
    } = report;
    let (w, h) = (heights.width, heights.height);
    match kind {
        FileKind::Hgt => unreachable!("refused with the bit depth above"),
        FileKind::R32 => {
            let rows = heights
                .values
                .chunks(w as usize)
                .map(|row| row.iter().flat_map(|v| v.to_le_bytes()).collect());
            write_rows(path, h, progress, rows)?
        }
        FileKind::Raw16 => {
            let (q, c) = quantize(&heights.values, range.expect("integer"), 65535.0);
            report.clamped = c;
            let rows = q.chunks(w as usize).map(|row| {
                row.iter()
                    .flat_map(|&v| match options.endian {
                        Endian::Little => (v as u16).to_le_bytes(),
                        Endian::Big => (v as u16).to_be_bytes(),
                    })
                    .collect()
            });
            write_rows(path, h, progress, rows)?
        }
        FileKind::Png => {
            let max = if bits == 8 { 255.0 } else { 65535.0 };
            let (q, c) = quantize(&heights.values, range.expect("integer"), max);
            report.clamped = c;
            write_png(path, w, h, bits, &q)?
        }
        FileKind::Tiff => {
            let mut q16 = Vec::new();
            if bits == 16 {
                let (q, c) = quantize(&heights.values, range.expect("integer"), 65535.0);
                report.clamped = c;
                q16 = q.into_iter().map(|v| v as u16).collect();
            }
            let samples = match bits {
                16 => TiffSamples::U16(&q16),
                _ => TiffSamples::F32(&heights.values),
            };
            write_atomic(path, |out| {
                write_tiff(out, w, h, samples, options.geo.as_ref())
                    .map_err(|e| FileError::invalid(path, e.to_string()))
            })?
        }
        FileKind::Exr => write_exr(path, heights)?,
    }
    progress(u64::from(h), u64::from(h));
    Ok(report)
}

/// Checks that `heights` can be written to `path` with `options`: the report of the write
/// before it runs (format, bit depth and, for integer samples, the range; nothing clamped yet).
fn check_write(
    path: &Path,
    heights: &Heights,
    options: &WriteOptions,
) -> Result<WriteReport, FileError> {
    let at = |problem: String| FileError::invalid(path, problem);
    let kind = FileKind::of(path)?;
    check_size(heights.width, heights.height).map_err(at)?;
    if heights.values.len() != heights.width as usize * heights.height as usize {
        return Err(at("heights do not match the size".into()));
    }
    check_finite(&heights.values, heights.width).map_err(at)?;
    let bits = match (kind, options.bits) {
        (FileKind::Hgt, _) => return Err(at(HGT_NOT_WRITTEN.into())),
        (FileKind::Png, None) => 16,
        (FileKind::Png, Some(b @ (8 | 16))) => b,
        (FileKind::Tiff, None) => 32,
        (FileKind::Tiff, Some(b @ (16 | 32))) => b,
        (FileKind::Raw16, None | Some(16)) => 16,
        (FileKind::R32 | FileKind::Exr, None | Some(32)) => 32,
        (_, Some(b)) => {
            return Err(at(format!(
                "{b} bits is not offered by this format (png: 8 or 16, tiff: 16 or 32, r16: 16, r32/exr: 32)"
            )))
        }
    };
    let range = if kind.is_integer(bits) {
        let r = options
            .range
            .unwrap_or_else(|| default_range(&heights.values));
        check_range(r).map_err(at)?;
        Some(r)
    } else {
        None
    };
    Ok(WriteReport {
        kind,
        bits,
        range,
        clamped: 0,
    })
}

/// Writes the rows of a raw file to `path` atomically, reporting progress every 256 rows (of
/// `h`).
fn write_rows(
    path: &Path,
    h: u32,
    progress: Progress<'_>,
    rows: impl Iterator<Item = Vec<u8>>,
) -> Result<(), FileError> {
    let to_io = |e: std::io::Error| FileError::io(path)(e);
    write_atomic(path, |out| {
        for (y, bytes) in rows.enumerate() {
            out.write_all(&bytes).map_err(to_io)?;
            if y % 256 == 0 {
                progress(y as u64 + 1, u64::from(h));
            }
        }
        Ok::<(), FileError>(())
    })
}

/// Writes quantized heights `q` (8 or 16 `bits`) to `path` as a gray PNG, atomically.
fn write_png(path: &Path, w: u32, h: u32, bits: u8, q: &[u32]) -> Result<(), FileError> {
    write_atomic(path, |out| {
        let encoder = image::codecs::png::PngEncoder::new(out);
        let result = if bits == 8 {
            let data: Vec<u8> = q.iter().map(|&v| v as u8).collect();
            image::ImageEncoder::write_image(encoder, &data, w, h, image::ExtendedColorType::L8)
        } else {
            let data: Vec<u8> = q.iter().flat_map(|&v| (v as u16).to_ne_bytes()).collect();
            image::ImageEncoder::write_image(encoder, &data, w, h, image::ExtendedColorType::L16)
        };
        result.map_err(|e| FileError::invalid(path, e.to_string()))
    })
}

/// Writes `heights` to `path` as a one-channel (Y) float EXR, atomically.
fn write_exr(path: &Path, heights: &Heights) -> Result<(), FileError> {
    let (w, h) = (heights.width, heights.height);
    write_atomic(path, |out| {
        use exr::prelude::*;
        let values = &heights.values;
        let channels = SpecificChannels::build()
            .with_channel("Y")
            .with_pixel_fn(|p: Vec2<usize>| (values[p.y() * w as usize + p.x()],));
        Image::from_channels((w as usize, h as usize), channels)
            .write()
            .to_buffered(out)
            .map_err(|e| FileError::invalid(path, e.to_string()))
    })
}

/// A TIFF's samples: 16-bit levels or 32-bit floats.
#[derive(Clone, Copy)]
enum TiffSamples<'a> {
    U16(&'a [u16]),
    F32(&'a [f32]),
}

fn write_tiff<W: Write + Seek>(
    out: W,
    w: u32,
    h: u32,
    samples: TiffSamples,
    geo: Option<&crate::pages::GeoPlacement>,
) -> Result<(), tiff::TiffError> {
    use tiff::encoder::colortype::{self, ColorType};
    use tiff::encoder::{ImageEncoder, TiffEncoder, TiffKind};
    use tiff::tags::Tag;
    /// Writes the GeoTIFF tags of `geo`, then the samples.
    fn finish<W: Write + Seek, C: ColorType, K: TiffKind>(
        mut image: ImageEncoder<W, C, K>,
        geo: Option<&crate::pages::GeoPlacement>,
        data: &[C::Inner],
    ) -> Result<(), tiff::TiffError>
    where
        [C::Inner]: tiff::encoder::TiffValue,
    {
        if let Some(g) = geo {
            let (scale, tiepoint, keys) = georef::geotiff_tags(g);
            let dir = image.encoder();
            dir.write_tag(Tag::ModelPixelScaleTag, &scale[..])?;
            dir.write_tag(Tag::ModelTiepointTag, &tiepoint[..])?;
            dir.write_tag(Tag::GeoKeyDirectoryTag, &keys[..])?;
        }
        image.write_data(data)
    }
    let mut enc = TiffEncoder::new(out)?;
    match samples {
        TiffSamples::U16(q) => finish(enc.new_image::<colortype::Gray16>(w, h)?, geo, q),
        TiffSamples::F32(v) => finish(enc.new_image::<colortype::Gray32Float>(w, h)?, geo, v),
    }
}

/// The range integer formats map onto when none is given: the heights' own min..max (an
/// interval even for a constant grid).
pub fn default_range(heights: &[f32]) -> (f32, f32) {
    spanning(min_max(heights))
}

/// The range `(lo, hi)` as [`default_range`] makes it from the heights' min and max: one height
/// unit from `lo` where they are equal.
pub fn spanning((lo, hi): (f32, f32)) -> (f32, f32) {
    if lo < hi {
        (lo, hi)
    } else {
        (lo, lo + 1.0)
    }
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

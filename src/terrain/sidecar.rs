//! The sidecar an export writes beside each height file, `FILE.json` (`land.png.json`): what an
//! engine needs to bring the heights in at their real size — the texel size and extent in
//! metres, the heights in metres, how integer values map onto heights, the georeference, and the
//! numbers Unreal's and Unity's terrain imports ask for. docs/units.md lists the fields.

use super::formats::{Heights, WriteReport};
use crate::atomic_file::{write_atomic, FileError};
use crate::pages::{DocumentDesc, GeoPlacement, Units};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The sidecar's format version.
pub const VERSION: u32 = 1;

/// What an exported file holds, in metres.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sidecar {
    pub scarp_export: u32,
    /// The height file's name.
    pub file: String,
    pub width: u32,
    pub height: u32,
    /// Metres per texel, and whether the document knows it (else 1, the default).
    pub texel_size_m: f64,
    pub texel_size_known: bool,
    /// Width and height in metres.
    pub extent_m: [f64; 2],
    /// Metres per height unit, and whether the document knows it (else a quarter of its larger
    /// side's metres, the default).
    pub height_unit_m: f64,
    pub height_unit_known: bool,
    /// Metres at height 0.
    pub height_origin_m: f64,
    /// The lowest and highest height written, in height units and in metres.
    pub heights: [f32; 2],
    pub heights_m: [f64; 2],
    /// Integer formats: how stored values map onto heights.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub integer: Option<IntegerMapping>,
    /// Where texel (0, 0) lies, when the document came from a georeferenced file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geo: Option<GeoPlacement>,
    pub unreal: Unreal,
    pub unity: Unity,
}

/// Value v of a `bits`-bit file is the height `range[0] + v / (2^bits − 1) · (range[1] −
/// range[0])` (in metres: `range_m`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntegerMapping {
    pub bits: u8,
    pub range: [f32; 2],
    pub range_m: [f64; 2],
}

/// Unreal's landscape import: X/Y scale in centimetres per texel; Z scale such that the 16-bit
/// range spans the heights (a 16-bit value v lies at (v − 32768) · Z / 128 cm, so 65536 values
/// span 512 · Z cm), and the Z position of the range's middle in centimetres.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Unreal {
    pub scale_xy_cm: f64,
    pub scale_z: f64,
    pub location_z_cm: f64,
}

/// Unity's terrain: its size (width, height range, length) in metres.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Unity {
    pub size_m: [f64; 3],
}

/// Largest sidecar read, bytes.
const MAX_BYTES: u64 = 1 << 20;

/// The sidecar beside `file` when there is one that names it; Err (naming the sidecar) for one
/// that cannot be read.
pub fn beside(file: &Path) -> Result<Option<Sidecar>, FileError> {
    let path = path_of(file);
    if !path.exists() {
        return Ok(None);
    }
    let f = crate::atomic_file::open_regular(&path).map_err(FileError::io(&path))?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::Read::take(f, MAX_BYTES), &mut text)
        .map_err(FileError::io(&path))?;
    let bad = |e: String| FileError::invalid(&path, e);
    let s: Sidecar = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    s.units().validate().map_err(bad)?;
    let own = file
        .file_name()
        .is_some_and(|n| n.to_string_lossy() == s.file);
    Ok(own.then_some(s))
}

/// The sidecar of `file`.
pub fn path_of(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_os_string();
    name.push(".json");
    PathBuf::from(name)
}

impl Sidecar {
    /// The units it gives (what the document knew).
    pub fn units(&self) -> Units {
        Units {
            texel_size: self.texel_size_known.then_some(self.texel_size_m),
            height_unit: self.height_unit_known.then_some(self.height_unit_m),
            height_origin: (self.height_origin_m != 0.0).then_some(self.height_origin_m),
            geo: self.geo,
        }
    }

    /// The height range its integer values span.
    pub fn range(&self) -> Option<(f32, f32)> {
        self.integer.as_ref().map(|i| (i.range[0], i.range[1]))
    }

    /// The sidecar of `grid`, the part of document `doc` from texel `at`, written to `file`
    /// as `report` says.
    pub fn of(
        file: &Path,
        grid: &Heights,
        doc: &DocumentDesc,
        at: (u32, u32),
        report: &WriteReport,
    ) -> Self {
        let texel = doc.texel_size();
        let (lo, hi) = super::formats::min_max(&grid.values);
        let integer = report.range.map(|(a, b)| IntegerMapping {
            bits: report.bits,
            range: [a, b],
            range_m: [doc.metres(a), doc.metres(b)],
        });
        // The 16-bit range an engine imports: the integer mapping's, else the heights'.
        let [z0, z1] = integer
            .as_ref()
            .map_or([doc.metres(lo), doc.metres(hi)], |i| i.range_m);
        let extent = [
            f64::from(grid.width) * texel,
            f64::from(grid.height) * texel,
        ];
        Self {
            scarp_export: VERSION,
            file: file
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            width: grid.width,
            height: grid.height,
            texel_size_m: texel,
            texel_size_known: doc.units.texel_size.is_some(),
            extent_m: extent,
            height_unit_m: doc.height_unit(),
            height_unit_known: doc.units.height_unit.is_some(),
            height_origin_m: doc.units.height_origin.unwrap_or(0.0),
            heights: [lo, hi],
            heights_m: [doc.metres(lo), doc.metres(hi)],
            integer,
            geo: doc.units.geo.map(|g| g.from_texel(at.0, at.1)),
            unreal: Unreal {
                scale_xy_cm: texel * 100.0,
                scale_z: (z1 - z0) * 100.0 / 512.0,
                location_z_cm: 0.5 * (z0 + z1) * 100.0,
            },
            unity: Unity {
                size_m: [extent[0], z1 - z0, extent[1]],
            },
        }
    }

    /// Writes the sidecar beside its file, atomically.
    pub fn write_beside(&self, file: &Path) -> Result<PathBuf, FileError> {
        let path = path_of(file);
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| FileError::invalid(&path, e.to_string()))?;
        write_atomic(&path, |out| {
            out.write_all(text.as_bytes())
                .and_then(|_| out.write_all(b"\n"))
                .map_err(FileError::io(&path))
        })?;
        Ok(path)
    }
}

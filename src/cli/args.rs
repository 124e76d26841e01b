//! Arguments several commands share: how to read a height file, the backend, and the parsers of
//! sizes, pairs, ranges and cameras.

use crate::pages::geometry::Region;
use crate::pages::{BudgetRequest, Budgets, Units};
use crate::terrain::formats::{Endian, ReadOptions};
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};

/// Largest side of a generated grid.
pub const MAX_SIDE: u32 = 65536;
pub use crate::terrain::export::MAX_SAMPLES;

/// How to read a height file.
#[derive(Args, Clone, Debug)]
pub struct ReadArgs {
    /// Size of a raw height file, WxH (inferred when the file is square).
    #[arg(long, value_parser = parse_size)]
    pub size: Option<(u32, u32)>,
    /// Heights of the lowest and highest value of integer files (PNG, raw 16-bit, 16-bit TIFF).
    #[arg(long, value_parser = parse_range, allow_hyphen_values = true)]
    pub range: Option<(f32, f32)>,
    /// Byte order of raw 16-bit files.
    #[arg(long, value_enum, default_value_t = Endian::Little)]
    pub endian: Endian,
    /// Metres per texel of the heights read, over what the file says [default: a GeoTIFF's or
    /// SRTM tile's georeference, else 1].
    #[arg(long, value_name = "METRES")]
    pub texel_size: Option<f64>,
    /// Metres per height unit of the heights read, over what the file says [default: 1 for a
    /// georeferenced file of elevations, else a quarter of the larger side in texels].
    #[arg(long, value_name = "METRES")]
    pub height_unit: Option<f64>,
}

/// Which part of a layered `.scarp` project a command reads: the composite (what the editor
/// shows and exports) unless one of these asks for another.
#[derive(Args, Clone, Debug, Default)]
pub struct ProjectPart {
    /// A layered project: its base (the heights under the layers) instead of the composite.
    #[arg(long, conflicts_with = "layer")]
    pub base: bool,
    /// A layered project: this layer's values instead of the composite.
    #[arg(long, value_name = "NAME")]
    pub layer: Option<String>,
}

impl ProjectPart {
    /// Refuses --base and --layer for `input` when it is not a project.
    pub fn check(&self, input: &Path) -> Result<(), String> {
        if !is_project(input) && (self.base || self.layer.is_some()) {
            return Err(format!(
                "{}: --base and --layer pick a part of a .scarp project",
                input.display()
            ));
        }
        Ok(())
    }

    /// Whether the whole composite is asked for (neither the base nor a layer).
    pub fn composite(&self) -> bool {
        !self.base && self.layer.is_none()
    }
}

/// Whether `path` names a `.scarp` project.
/// Refuses, before any work, an output that cannot be written, that is the input itself, or
/// that two of the output flags (`flags`, as the error names them) name.
pub fn check_outputs(input: &Path, outputs: &[&PathBuf], flags: &str) -> anyhow::Result<()> {
    for (i, p) in outputs.iter().enumerate() {
        crate::terrain::export::check_writable(p)?;
        if p.canonicalize().ok().is_some() && p.canonicalize().ok() == input.canonicalize().ok() {
            anyhow::bail!("{}: input and output are the same file", p.display());
        }
        if outputs[..i].contains(p) {
            anyhow::bail!("{}: written twice ({flags})", p.display());
        }
    }
    Ok(())
}

pub fn is_project(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "scarp")
}

impl ReadArgs {
    /// The units the flags give (what they leave out: None).
    pub fn units(&self) -> Units {
        Units {
            texel_size: self.texel_size,
            height_unit: self.height_unit,
            height_origin: None,
            geo: None,
        }
    }

    /// How to read `file` and the units the flags give, with what the sidecar an export wrote
    /// beside it says (docs/units.md) under the flags: its units, its size (raw files) and the
    /// height range of its integer values unless --size and --range give them. Its path when
    /// there is one. The flags are checked first, the error naming the flag.
    pub fn for_file(&self, file: &Path) -> Result<(ReadOptions, Units, Option<PathBuf>), String> {
        self.units().validate().map_err(|e| {
            e.replace("texel_size", "--texel-size")
                .replace("height_unit", "--height-unit")
        })?;
        let Some(sidecar) = crate::terrain::sidecar::beside(file).map_err(|e| e.to_string())?
        else {
            return Ok((self.options(), self.units(), None));
        };
        let options = ReadOptions {
            size: self.size.or(Some((sidecar.width, sidecar.height))),
            range: self.range.or(sidecar.range()).unwrap_or((0.0, 1.0)),
            ..self.options()
        };
        let path = crate::terrain::sidecar::path_of(file);
        Ok((options, sidecar.units().or(self.units()), Some(path)))
    }

    pub fn options(&self) -> ReadOptions {
        ReadOptions {
            size: self.size,
            range: self.range.unwrap_or((0.0, 1.0)),
            endian: self.endian,
        }
    }
}

/// Memory budgets of a document's pages (`apply`, `render`, `edit`).
#[derive(Args, Clone, Debug, Default)]
pub struct MemoryArgs {
    /// GPU memory for page images, e.g. 512MiB, 4GiB or unlimited. Past it, the least recently
    /// used pages move to host memory. Default: half of the device-local heap.
    #[arg(long, value_parser = parse_limit)]
    pub gpu_budget: Option<Limit>,
    /// Host memory for pages moved off the GPU; past it they go to a page file (next to the
    /// project, else in the temporary folder). Default: a quarter of the machine's memory.
    #[arg(long, value_parser = parse_limit)]
    pub host_budget: Option<Limit>,
}

/// A memory size, or no limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limit(pub Option<u64>);

impl MemoryArgs {
    /// The budgets these flags ask for.
    pub fn request(&self) -> BudgetRequest {
        BudgetRequest {
            gpu: self.gpu_budget.map(|l| l.0),
            host: self.host_budget.map(|l| l.0),
        }
    }

    /// The budgets these flags ask for on `gpu`, for the document of `project` (if any).
    pub fn budgets(&self, gpu: &crate::gpu::Gpu, project: Option<&Path>) -> Budgets {
        self.request().budgets(gpu, project)
    }
}

/// `512MiB`, `4GiB`, `1.5GiB`, `300MB`, `65536` (bytes) or `unlimited`.
pub fn parse_limit(s: &str) -> Result<Limit, String> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("unlimited") || t.eq_ignore_ascii_case("none") {
        return Ok(Limit(None));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kib" | "k" => 1 << 10,
        "mib" | "m" => 1 << 20,
        "gib" | "g" => 1 << 30,
        "tib" | "t" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        other => {
            return Err(format!(
                "'{s}': unknown unit '{other}' (use KiB, MiB, GiB, TiB, or unlimited)"
            ))
        }
    };
    let n: f64 = number
        .parse()
        .map_err(|_| format!("'{s}' is not a size such as 512MiB or 4GiB"))?;
    let bytes = n * scale as f64;
    if !(bytes >= 1.0 && bytes < 2f64.powi(63)) {
        return Err(format!("'{s}': a budget must be at least one byte"));
    }
    Ok(Limit(Some(bytes as u64)))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// Vulkan compute (SCARP_GPU picks the device).
    Gpu,
    /// The CPU twin, on all cores.
    Cpu,
}

pub fn parse_range(s: &str) -> Result<(f32, f32), String> {
    let (lo, hi) = parse_pair(s)?;
    if lo >= hi {
        return Err(format!("'{s}': MIN must be below MAX"));
    }
    Ok((lo, hi))
}

pub fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("'{s}' is not WIDTHxHEIGHT"))?;
    let side = |v: &str| -> Result<u32, String> {
        let n: u32 = v
            .trim()
            .parse()
            .map_err(|_| format!("'{v}' in '{s}' is not a whole number"))?;
        if n == 0 || n > MAX_SIDE {
            return Err(format!(
                "each side must be between 1 and {MAX_SIDE}, got {n}"
            ));
        }
        Ok(n)
    };
    let (w, h) = (side(w)?, side(h)?);
    if u64::from(w) * u64::from(h) > MAX_SAMPLES {
        return Err(format!("{w}x{h} is more than {MAX_SAMPLES} samples"));
    }
    Ok((w, h))
}

/// Largest side of a rendered image. Images past [`WHOLE_IMAGE_BYTES`] are drawn and written
/// in strips, so memory stays bounded whatever the size (16384² drawn whole took past 5.5 GB).
pub const MAX_IMAGE_SIDE: u32 = 16384;

/// Most bytes of RGBA8 pixels `scarp render` draws at once (64 MiB: 4096x4096); a bigger image
/// is drawn in strips of as many rows as fit.
pub const WHOLE_IMAGE_BYTES: u64 = 64 << 20;

pub fn parse_image_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = parse_size(s)?;
    if w > MAX_IMAGE_SIDE || h > MAX_IMAGE_SIDE {
        return Err(format!(
            "images are at most {MAX_IMAGE_SIDE}x{MAX_IMAGE_SIDE}, got {w}x{h}"
        ));
    }
    Ok((w, h))
}

/// Most tiles one `--tiles` splits into or stitches (64 x 64).
pub const MAX_TILES: u32 = 4096;

pub fn parse_camera(s: &str) -> Result<[f32; 6], String> {
    let v: Vec<&str> = s.split(',').collect();
    if v.len() != 6 {
        return Err(format!("'{s}' is not ex,ey,ez,tx,ty,tz (6 numbers)"));
    }
    let mut out = [0.0; 6];
    for (o, t) in out.iter_mut().zip(&v) {
        *o = t
            .trim()
            .parse::<f32>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("'{t}' in '{s}' is not a finite number"))?;
    }
    if out[..3] == out[3..] {
        return Err("the camera's eye and target are the same point".into());
    }
    Ok(out)
}

pub fn parse_pair(s: &str) -> Result<(f32, f32), String> {
    crate::noise::parse_xy(s).map(|[x, y]| (x, y))
}

/// `X,Y,W,H` in texels.
pub fn parse_region(s: &str) -> Result<Region, String> {
    let v: Vec<&str> = s.split(',').collect();
    if v.len() != 4 {
        return Err(format!("'{s}' is not X,Y,W,H"));
    }
    let n = |t: &str| {
        t.trim()
            .parse::<u32>()
            .map_err(|_| format!("'{t}' in '{s}' is not a whole number"))
    };
    let r = Region {
        x: n(v[0])?,
        y: n(v[1])?,
        width: n(v[2])?,
        height: n(v[3])?,
    };
    if r.width == 0 || r.height == 0 {
        return Err(format!("'{s}': the region is empty"));
    }
    Ok(r)
}

/// `CxR` tiles (1 to 1024 a side).
pub fn parse_tiles(s: &str) -> Result<(u32, u32), String> {
    let (c, r) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("'{s}' is not CxR"))?;
    let n = |t: &str| {
        t.trim()
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=1024).contains(n))
            .ok_or_else(|| format!("'{t}' in '{s}': tiles per side must be 1 to 1024"))
    };
    let (c, r) = (n(c)?, n(r)?);
    if c * r > MAX_TILES {
        return Err(format!(
            "'{s}' is {} tiles: at most {MAX_TILES} (64x64)",
            c * r
        ));
    }
    Ok((c, r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_parse_binary_and_decimal_units_and_refuse_nonsense() {
        assert_eq!(parse_limit("512MiB"), Ok(Limit(Some(512 << 20))));
        assert_eq!(parse_limit("4GiB"), Ok(Limit(Some(4 << 30))));
        assert_eq!(parse_limit("1.5GiB"), Ok(Limit(Some(3 << 29))));
        assert_eq!(parse_limit("300MB"), Ok(Limit(Some(300_000_000))));
        assert_eq!(parse_limit("65536"), Ok(Limit(Some(65536))));
        assert_eq!(parse_limit("unlimited"), Ok(Limit(None)));
        for bad in ["", "0", "12 parsecs", "-3GiB", "GiB", "1e400"] {
            let e = parse_limit(bad).unwrap_err();
            assert!(e.contains(&format!("'{bad}'")), "{bad}: {e}");
        }
    }
}

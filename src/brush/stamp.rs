//! Stamp images for stamp brushes (paper eq. 3): a grayscale image added along the stroke through
//! each instance's transform T_i. Loaded from PNG (any bit depth, as gray, scaled to [0, 1]) or
//! raw little-endian f32 `.r32` (size given). Sampled bilinearly with texel centres at integer +
//! 0.5 and zero outside, exactly as `stampSample` in brush.glsl.

use std::path::{Path, PathBuf};

/// Largest stamp side.
pub const MAX_STAMP_SIDE: u32 = 8192;

/// A stamp image, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct Stamp {
    pub width: u32,
    pub height: u32,
    pub values: Vec<f32>,
    /// The file it was loaded from (absolute), so a stroke with it can be journaled; None for a
    /// stamp made in memory.
    pub source: Option<PathBuf>,
}

impl Stamp {
    /// Loads `path`, any height file format (`terrain::formats`; integer formats scaled to
    /// [0, 1]); raw files need `size` unless square. Errors name the file and the problem.
    pub fn load(path: &Path, size: Option<[u32; 2]>) -> Result<Self, String> {
        let name = path.display();
        if path.extension().is_some_and(|e| e == "scarp") {
            return Err(format!(
                "{name}: a project is not a stamp: export its heights first (scarp convert \
                 {name} stamp.r32)"
            ));
        }
        let grid = crate::terrain::formats::read(
            path,
            &crate::terrain::formats::ReadOptions {
                size: size.map(|[w, h]| (w, h)),
                ..Default::default()
            },
        )
        .map_err(|e| {
            e.to_string()
                .replace("(--size WxH)", "(stamp_size: [width, height])")
        })?;
        let stamp = Stamp {
            width: grid.width,
            height: grid.height,
            values: grid.values,
            source: Some(path.canonicalize().unwrap_or_else(|_| path.to_path_buf())),
        };
        stamp.check().map_err(|e| format!("{name}: {e}"))?;
        Ok(stamp)
    }

    fn check(&self) -> Result<(), String> {
        if self.width == 0
            || self.height == 0
            || self.width > MAX_STAMP_SIDE
            || self.height > MAX_STAMP_SIDE
        {
            return Err(format!(
                "stamp size must be 1 to {MAX_STAMP_SIDE} per side, got {}x{}",
                self.width, self.height
            ));
        }
        if let Some(i) = self.values.iter().position(|v| !v.is_finite()) {
            return Err(format!(
                "non-finite value at texel ({}, {})",
                i as u32 % self.width,
                i as u32 / self.width
            ));
        }
        Ok(())
    }

    fn at(&self, x: i32, y: i32) -> f32 {
        if x < 0 || y < 0 || x >= self.width as i32 || y >= self.height as i32 {
            0.0
        } else {
            self.values[y as usize * self.width as usize + x as usize]
        }
    }

    /// Bilinear sample at stamp position `s` (texel units), zero outside.
    pub fn sample(&self, s: [f32; 2]) -> f32 {
        let (fx, fy) = (s[0].floor(), s[1].floor());
        let (tx, ty) = (s[0] - fx, s[1] - fy);
        let (x, y) = (fx as i32, fy as i32);
        let top = self.at(x, y) + (self.at(x + 1, y) - self.at(x, y)) * tx;
        let bottom = self.at(x, y + 1) + (self.at(x + 1, y + 1) - self.at(x, y + 1)) * tx;
        top + (bottom - top) * ty
    }
}

/// `stampPosition` of brush.glsl: texel p in the stamp's texel space for an instance at `center`
/// with unit rotation `axis`, the stamp spanning `2 x half_extent` texels of the document.
pub fn stamp_position(
    p: [f32; 2],
    center: [f32; 2],
    axis: [f32; 2],
    half_extent: f32,
    size: [f32; 2],
) -> [f32; 2] {
    let l = [p[0] - center[0], p[1] - center[1]];
    let u = l[0] * axis[0] + l[1] * axis[1];
    let v = l[1] * axis[0] - l[0] * axis[1];
    [
        (u / half_extent * 0.5 + 0.5) * size[0] - 0.5,
        (v / half_extent * 0.5 + 0.5) * size[1] - 0.5,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bilinear_sampling_is_exact_at_texels_and_zero_outside() {
        let s = Stamp {
            width: 2,
            height: 2,
            values: vec![0.0, 1.0, 2.0, 3.0],
            source: None,
        };
        assert_eq!(s.sample([0.0, 0.0]), 0.0);
        assert_eq!(s.sample([1.0, 1.0]), 3.0);
        assert_eq!(s.sample([0.5, 0.5]), 1.5);
        assert_eq!(s.sample([-5.0, 0.0]), 0.0);
    }

    #[test]
    fn bad_stamp_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.r32");
        std::fs::write(&p, [0u8; 12]).unwrap();
        assert!(Stamp::load(&p, None).unwrap_err().contains("stamp_size"));
        assert!(Stamp::load(&p, Some([2, 2]))
            .unwrap_err()
            .contains("12 bytes, but 2x2 needs 16"));
        // Devices are refused before anything is read (no endless /dev/zero).
        let zero = dir.path().join("zero.r32");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let e = Stamp::load(&zero, Some([2, 2])).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
        let png = dir.path().join("bad.png");
        std::fs::write(&png, b"not a png").unwrap();
        assert!(Stamp::load(&png, None).unwrap_err().contains("bad.png"));
    }
}

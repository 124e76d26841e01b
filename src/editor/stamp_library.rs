//! The brush panel's stamps: the library in `assets/stamps` and any stamp opened with the file
//! browser, each with a thumbnail texture.

use super::ui_texture::UiTexture;
use crate::brush::stamp::Stamp;
use crate::gpu::Gpu;
use anyhow::Result;
use std::path::Path;
use std::sync::Arc;

/// The bundled library's folder.
pub const LIBRARY_DIR: &str = "assets/stamps";
/// Pixels of a thumbnail's side.
pub const THUMBNAIL: u32 = 56;

/// `stamp` averaged down to `side` x `side` (each pixel the mean of the stamp texels whose
/// centres fall in it; nearest texel where none does).
pub fn thumbnail(stamp: &Stamp, side: u32) -> Vec<f32> {
    let (w, h) = (stamp.width as usize, stamp.height as usize);
    let side = side as usize;
    let mut sum = vec![0.0f64; side * side];
    let mut count = vec![0u32; side * side];
    for y in 0..h {
        let ty = (y * side) / h;
        for x in 0..w {
            let t = ty * side + (x * side) / w;
            sum[t] += f64::from(stamp.values[y * w + x]);
            count[t] += 1;
        }
    }
    (0..side * side)
        .map(|t| match count[t] {
            0 => {
                let (x, y) = ((t % side) * w / side, (t / side) * h / side);
                stamp.values[y * w + x]
            }
            n => (sum[t] / f64::from(n)) as f32,
        })
        .collect()
}

/// A stamp the panel offers.
pub struct Entry {
    pub name: String,
    pub stamp: Arc<Stamp>,
    pub texture: UiTexture,
}

/// The stamps the panel offers, in order: the library's, then those opened since.
#[derive(Default)]
pub struct StampLibrary {
    pub entries: Vec<Entry>,
}

impl StampLibrary {
    /// The library in `dir` (its PNGs by name); files that do not load are skipped and named
    /// in the returned problems.
    pub fn load(
        gpu: &Arc<Gpu>,
        dir: &Path,
        renderer: &mut imgui_rs_vulkan_renderer::Renderer,
    ) -> Result<(Self, Vec<String>)> {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .map(|d| {
                d.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|e| e == "png"))
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        let mut library = Self::default();
        let mut problems = Vec::new();
        for f in files {
            match Stamp::load(&f, None) {
                Ok(s) => {
                    library.add(gpu, Arc::new(s), renderer)?;
                }
                Err(e) => problems.push(e),
            }
        }
        Ok((library, problems))
    }

    /// Adds `stamp` (named by its file) unless a stamp from the same file is there; returns its
    /// index.
    pub fn add(
        &mut self,
        gpu: &Arc<Gpu>,
        stamp: Arc<Stamp>,
        renderer: &mut imgui_rs_vulkan_renderer::Renderer,
    ) -> Result<usize> {
        if let Some(i) = self.index_of(&stamp) {
            self.entries[i].stamp = stamp;
            return Ok(i);
        }
        let name = stamp
            .source
            .as_deref()
            .and_then(|p| p.file_stem())
            .map_or_else(|| "stamp".into(), |n| n.to_string_lossy().into_owned());
        let mut texture = UiTexture::new(gpu, "stamp thumbnail", [THUMBNAIL; 2], renderer)?;
        texture.write(&super::noise_preview::grey_pixels(&thumbnail(
            &stamp, THUMBNAIL,
        )))?;
        self.entries.push(Entry {
            name,
            stamp,
            texture,
        });
        Ok(self.entries.len() - 1)
    }

    /// The entry holding the stamp from the same file as `stamp`.
    pub fn index_of(&self, stamp: &Stamp) -> Option<usize> {
        let source = stamp.source.as_ref()?;
        self.entries
            .iter()
            .position(|e| e.stamp.source.as_ref() == Some(source))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thumbnails_average_the_texels_of_each_pixel() {
        let s = Stamp {
            width: 4,
            height: 2,
            values: vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0],
            source: None,
        };
        assert_eq!(thumbnail(&s, 2), [0.5, 2.5, 4.5, 6.5]);
        assert_eq!(thumbnail(&s, 1), [3.5]);
        // Larger than the stamp: the nearest texel.
        let t = thumbnail(&s, 8);
        assert_eq!(t[0], 0.0);
        assert_eq!(t[7], 3.0);
        assert_eq!(t[63], 7.0);
    }
}

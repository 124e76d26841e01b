//! Terrain maps derived from the heights for engines and other tools (docs/maps.md): the material
//! weights by the viewport's own rules (what the viewport shows, as splat and weight maps).
//!
//! * [`materials`]: the rule function's CPU twin and the 8-bit levels that sum to 255.
//! * [`cpu`]: a region's maps on the CPU (the twin of the kernels).
//! * [`gpu`]: the kernels over a region in storage buffers.
//! * [`kernels`]: the kernels a job runs, the GPU's or the twins (`--backend`).
//! * [`drainage`]: D8 drainage counts on the GPU by pointer doubling, and their twin.
//! * [`flow`]: drainage area and wetness, and their overlays' shades.
//! * [`overlay`]: the maps an overlay tints the terrain with from a field.
//! * [`field`]: a surface map as a derived field of the page store, following the heights.

pub mod cpu;
pub mod drainage;
pub mod field;
pub mod flow;
pub mod gpu;
pub mod kernels;
pub mod materials;
pub mod overlay;

use bytemuck::{Pod, Zeroable};

/// A region's maps from the kernel or its twin.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Maps {
    /// 5 per texel, [`materials::NAMES`] order.
    pub weights: Vec<f32>,
    /// [`Surface::COUNT`] per texel, [`Surface`] order: the slope (degrees), the curvature (1/m:
    /// the Laplacian of the heights in metres, concave above 0), the profile and the plan
    /// curvature (1/m, concave above 0; docs/maps.md).
    pub surface: Vec<f32>,
}

/// The surface maps the weight kernel writes beside the weights, in their order per texel (the
/// page kernel's `map` index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Surface {
    Slope,
    Curvature,
    Profile,
    Plan,
}

impl Surface {
    /// Values per texel in [`Maps::surface`].
    pub const COUNT: usize = 4;
}

impl Maps {
    /// Surface map `k`, one value per texel, row-major.
    pub fn surface(&self, k: Surface) -> impl Iterator<Item = f32> + '_ {
        self.surface
            .iter()
            .skip(k as usize)
            .step_by(Surface::COUNT)
            .copied()
    }
}

/// The weight kernel's push constants (`shaders-glsl/maps/weights.comp`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct MapsPush {
    /// The region (texels) and its texel (0, 0) in the document.
    pub size: [i32; 2],
    pub origin: [i32; 2],
    /// Metres between texels along x and along y, and metres per height unit.
    pub tau: [f32; 2],
    pub unit: f32,
    /// The altitude rules' range, height units (`hi` after the rules: std430 places vec4s at
    /// 16 bytes).
    pub lo: f32,
    pub rules0: [f32; 4],
    pub rules1: [f32; 4],
    pub hi: f32,
    pub _pad: [f32; 3],
}

const _: () = assert!(std::mem::size_of::<MapsPush>() == 80);

impl MapsPush {
    /// The push for a `size` region at `origin` of document `d` whose altitude rules span
    /// `lo..hi`, with materials `m`.
    pub fn new(
        d: &crate::pages::DocumentDesc,
        size: [u32; 2],
        origin: [u32; 2],
        (lo, hi): (f32, f32),
        m: &crate::render::look::Materials,
    ) -> Self {
        let (rules0, rules1) = materials::rules(m);
        Self {
            size: size.map(|v| v as i32),
            origin: origin.map(|v| v as i32),
            tau: [d.texel_size() as f32; 2],
            unit: d.height_unit() as f32,
            lo,
            rules0,
            rules1,
            hi,
            _pad: [0.0; 3],
        }
    }

    /// The same with `[x, y]` metres between texels.
    pub fn spaced(self, [x, y]: [f64; 2]) -> Self {
        Self {
            tau: [x as f32, y as f32],
            ..self
        }
    }
}

/// The surface page kernel's push constants (`shaders-glsl/maps/surface_page.comp`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct SurfacePagePush {
    /// The page's first texel in the document, and the document's size (texels).
    pub origin: [i32; 2],
    pub doc: [i32; 2],
    /// Metres between texels along x and along y, and metres per height unit.
    pub tau: [f32; 2],
    pub unit: f32,
    /// Pages are `side` texels a side.
    pub side: i32,
    /// Bit (dy + 1)·3 + (dx + 1): the height page at (dx, dy) has an image.
    pub present: u32,
    /// Height of pages without images, and the r16 range.
    pub flat_height: f32,
    pub height_min: f32,
    pub height_range: f32,
    /// [`Surface`] as its index.
    pub map: i32,
    /// Above 0: the two-sided tint `1 − clamp(v / full, −1, 1)` instead of the value.
    pub full: f32,
    /// Texels of the page inside the document.
    pub size: [i32; 2],
}

const _: () = assert!(std::mem::size_of::<SurfacePagePush>() == 64);

impl SurfacePagePush {
    /// The push for page `id` of document `d` (its flat height `flat`; `present` as
    /// [`crate::pages::field::neighbourhood`] gives it) and `map`.
    pub fn of(
        d: &crate::pages::DocumentDesc,
        flat: f32,
        id: crate::pages::geometry::PageId,
        present: u32,
        map: field::SurfaceMap,
    ) -> Self {
        let r = d.page_rect(id);
        Self {
            origin: [r.x0, r.y0],
            doc: [d.width as i32, d.height as i32],
            tau: [d.texel_size() as f32; 2],
            unit: d.height_unit() as f32,
            side: d.page_size as i32,
            present,
            flat_height: flat,
            height_min: d.height_min,
            height_range: d.height_range(),
            map: map.surface as i32,
            full: map.tint_full.unwrap_or(0.0),
            size: [r.width(), r.height()],
        }
    }
}

//! The maps an overlay tints the terrain with from a field (docs/maps.md, "In the viewport"):
//! drainage, wetness, profile and plan curvature, computed on the CPU from the whole
//! document's heights (a texel's drainage depends on everything upstream), as `scarp render
//! --overlay` and the editor's View panel show them.

use crate::maps::Surface;
use crate::pages::DocumentDesc;
use crate::render::analysis::Overlay;
use crate::render::terrain::Overlay as Tint;

/// The field maps, as the View panel offers them.
pub const FIELD_MAPS: [Overlay; 4] = [
    Overlay::Drainage,
    Overlay::Wetness,
    Overlay::Profile,
    Overlay::Plan,
];

/// Most texels a document may have for the editor to compute a field map as it is edited (a
/// 4096² document takes about a second on two cores).
pub const EDITOR_MOST_TEXELS: u64 = 4096 * 4096;

/// The tint values of field map `kind` over `heights` (the whole document `d`, row-major) and
/// how they tint: drainage and wetness blue (0..1), profile and plan curvature two-sided around
/// 1 (teal below: concave or converging; orange above; full at
/// [`crate::render::analysis::DEFAULT_CURVATURE`]). None for an overlay that is no field map.
pub fn shades(kind: Overlay, heights: &[f32], d: &DocumentDesc) -> Option<(Vec<f32>, Tint)> {
    let range = heights
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &h| {
            (lo.min(h), hi.max(h))
        });
    let surface = || {
        let push = crate::maps::MapsPush::new(
            d,
            [d.width, d.height],
            [0, 0],
            range,
            &crate::render::look::Materials::default(),
        );
        crate::maps::cpu::maps_region(heights, &push)
    };
    let area = || crate::maps::flow::drainage(heights, [d.width, d.height], d);
    let two_sided = |k: Surface| -> Vec<f32> {
        let full = crate::render::analysis::DEFAULT_CURVATURE;
        surface()
            .surface(k)
            .map(|c| 1.0 - (c / full).clamp(-1.0, 1.0))
            .collect()
    };
    Some(match kind {
        Overlay::Drainage => {
            let area: Vec<f32> = area().iter().map(|&a| a as f32).collect();
            let a0 = (d.texel_size() * d.texel_size()) as f32;
            (crate::maps::flow::drainage_shades(&area, a0), Tint::Water)
        }
        Overlay::Wetness => {
            let maps = surface();
            let slope = maps.surface(Surface::Slope);
            let wet = crate::maps::flow::wetness(&area(), slope, d.texel_size());
            (crate::maps::flow::wetness_shades(&wet), Tint::Water)
        }
        Overlay::Profile => (two_sided(Surface::Profile), Tint::Uplift),
        Overlay::Plan => (two_sided(Surface::Plan), Tint::Uplift),
        _ => return None,
    })
}

/// The View panel's name of field map `kind`.
pub fn name(kind: Overlay) -> &'static str {
    match kind {
        Overlay::Drainage => "drainage",
        Overlay::Wetness => "wetness",
        Overlay::Profile => "profile curvature",
        Overlay::Plan => "plan curvature",
        _ => "none",
    }
}

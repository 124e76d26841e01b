//! The maps an overlay tints the terrain with from a field (docs/maps.md, "In the viewport"):
//! drainage and wetness computed from the whole document's heights (a texel's drainage depends
//! on everything upstream; on the GPU by pointer doubling), profile and plan curvature, and
//! erosion's wear and
//! deposits, as [`crate::document::Document::write_field_map`] writes them into a tint field.
//! `scarp render --overlay` and the editor's View panel compute profile and plan curvature on
//! the GPU page by page instead ([`surface_map`], [`crate::maps::field`]); these are their
//! twins.

use crate::maps::field::SurfaceMap;
use crate::maps::kernels::MapKernels;
use crate::maps::Surface;
use crate::pages::DocumentDesc;
use crate::render::analysis::Overlay;
use crate::render::terrain::Overlay as Tint;

/// The field maps, as the View panel offers them.
pub const FIELD_MAPS: [Overlay; 5] = [
    Overlay::Drainage,
    Overlay::Wetness,
    Overlay::Profile,
    Overlay::Plan,
    Overlay::Erosion,
];

/// Most texels a document may have for `scarp render` to compute a global field map (drainage,
/// wetness, erosion): the whole document is read to the host and mapped at once (2^28, 16384²).
pub const MOST_TEXELS: u64 = 1 << 28;

/// Most texels a document may have for the editor to compute a global field map (drainage,
/// wetness, erosion) as it is edited: the whole document is read to the host, its drainage
/// counted on the GPU, tinted and written back each time.
pub const EDITOR_MOST_TEXELS: u64 = 8192 * 8192;

/// The tint values of field map `kind` over `heights` (the whole document `d`, row-major) and
/// how they tint: drainage and wetness blue (0..1), computed by `kernels`; profile and plan
/// curvature two-sided around 1 (teal below: concave or converging; orange above; full at
/// [`crate::render::analysis::DEFAULT_CURVATURE`]), the page field's twin. None for an overlay
/// that is no field map.
pub fn shades(
    kind: Overlay,
    heights: &[f32],
    d: &DocumentDesc,
    kernels: &mut dyn MapKernels,
) -> crate::gpu::Result<Option<(Vec<f32>, Tint)>> {
    let size = [d.width, d.height];
    Ok(Some(match kind {
        Overlay::Drainage => {
            let area = kernels.drainage(heights, size, d)?;
            let area: Vec<f32> = area.iter().map(|&a| a as f32).collect();
            let a0 = (d.texel_size() * d.texel_size()) as f32;
            (crate::maps::flow::drainage_shades(&area, a0), Tint::Water)
        }
        Overlay::Wetness => {
            let range = heights
                .iter()
                .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &h| {
                    (lo.min(h), hi.max(h))
                });
            let m = crate::render::look::Materials::default();
            let push = crate::maps::MapsPush::new(d, size, [0, 0], range, &m);
            let maps = kernels.maps(heights, &push)?;
            let slope = maps.surface(Surface::Slope);
            let area = kernels.drainage(heights, size, d)?;
            let wet = crate::maps::flow::wetness(&area, slope, d.texel_size());
            (crate::maps::flow::wetness_shades(&wet), Tint::Water)
        }
        Overlay::Profile | Overlay::Plan => {
            let map = surface_map(kind).expect("a surface map");
            (crate::maps::field::twin(heights, d, map), Tint::Uplift)
        }
        _ => return Ok(None),
    }))
}

/// The two-sided tint of erosion's net change, metres worn less metres laid down: above 1
/// (orange) where more was worn, below 1 (teal) where more was laid down, full at the largest
/// net change; 1 (no tint) everywhere where none.
pub fn erosion_shades(wear: &[f32], deposits: &[f32]) -> Vec<f32> {
    let net: Vec<f32> = wear.iter().zip(deposits).map(|(w, d)| w - d).collect();
    let full = net.iter().fold(0.0f32, |m, n| m.max(n.abs()));
    if full == 0.0 {
        return vec![1.0; net.len()];
    }
    net.iter().map(|n| 1.0 + n / full).collect()
}

/// The surface map the overlay `kind` shows, as the overlay's two-sided tint; None for a
/// global map.
pub fn surface_map(kind: Overlay) -> Option<SurfaceMap> {
    let surface = match kind {
        Overlay::Profile => Surface::Profile,
        Overlay::Plan => Surface::Plan,
        _ => return None,
    };
    Some(SurfaceMap {
        surface,
        tint_full: Some(crate::render::analysis::DEFAULT_CURVATURE),
    })
}

/// The View panel's name of field map `kind`.
pub fn name(kind: Overlay) -> &'static str {
    match kind {
        Overlay::Drainage => "drainage",
        Overlay::Wetness => "wetness",
        Overlay::Profile => "profile curvature",
        Overlay::Plan => "plan curvature",
        Overlay::Erosion => "erosion wear and deposits",
        _ => "none",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erosion_shades_are_orange_where_worn_teal_where_laid_down_full_at_the_largest() {
        let v = erosion_shades(&[2.0, 0.0, 1.0, 0.0], &[0.0, 4.0, 1.0, 0.0]);
        assert_eq!(v, vec![1.5, 0.0, 1.0, 1.0]);
        assert_eq!(erosion_shades(&[0.0; 3], &[0.0; 3]), vec![1.0; 3]);
    }
}

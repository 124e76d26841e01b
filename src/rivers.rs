//! The rivers' water: a field of the document that carved paths holding water write
//! ([`crate::brush::path::water_surface`], docs/journal.md "Paths"), saved with the project and
//! undone with the path, and that the shading draws like the sea (docs/render.md, "Rivers").

/// Name of the field: per texel the height (height units, as the heights) the water surface
/// stands at, [`NO_WATER`] where there is none. Water shows wherever the surface is above the
/// ground.
pub const RIVERS_FIELD: &str = "rivers";

/// The rivers field where no water stands: far below any ground, and finite, so that a blend of
/// it with a surface (bilinear, coarse levels) stays below the ground too.
pub const NO_WATER: f32 = -1.0e30;

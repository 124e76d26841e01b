//! Drawing the terrain: GeoMipMapping tiles whose vertex shader reads heights straight from the
//! page store's images, a camera, picking, offscreen rendering and timed frame loops. Reads the
//! page store (`&`), never the brush engine.

pub mod camera;
pub mod frame;
pub mod lod;
mod picks;
pub mod quadtree;
pub mod shared;

pub use camera::Camera;
pub mod analysis;
pub mod lighting;
pub mod look;
pub(crate) mod placeholder;
pub mod saved_view;
pub mod terrain;

pub use terrain::{
    CursorRing, FrameResults, FrameStats, RenderOptions, TerrainRenderer, ViewSettings, MAX_PICKS,
    SLOTS,
};
pub mod offscreen;
pub use offscreen::{Offscreen, OffscreenFrame};
pub mod frames;

//! Drawing the terrain: GeoMipMapping tiles whose vertex shader reads heights straight from the
//! brush engine's page images, a camera, picking, and offscreen rendering.

pub mod camera;
pub mod lod;
pub mod shared;

pub use camera::Camera;
pub mod terrain;

pub use terrain::{CursorRing, FrameStats, RenderOptions, TerrainRenderer, ViewSettings};
pub mod offscreen;
pub use offscreen::{Offscreen, OffscreenFrame};
pub mod frames;

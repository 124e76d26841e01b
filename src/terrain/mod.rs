//! Heightfields on disk and (later) in pages. For now: writing height grids as raw f32 or
//! normalized 16-bit PNG, atomically.

pub mod document;
pub mod export;
pub mod history;

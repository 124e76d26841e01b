//! Height files: reading and writing the formats engines use, atomically, whole or in tiles.
//! The document's pages live in [`crate::pages`], projects in [`crate::project`].

pub mod engines;
pub mod export;
pub mod formats;
pub mod georef;
pub mod sidecar;
pub mod tiles;

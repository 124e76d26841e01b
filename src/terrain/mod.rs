//! Height files and projects: reading and writing the formats engines use, atomically. The
//! document's pages themselves live in [`crate::pages`].

pub mod export;
pub mod formats;
pub mod project;
pub mod tiles;

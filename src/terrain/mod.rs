//! Heightfield documents (size, format, page grid), undo history, and height files: reading and
//! writing the formats engines use, atomically.

pub mod document;
pub mod export;
pub mod formats;
pub mod history;
pub mod project;

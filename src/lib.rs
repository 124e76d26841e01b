//! Scarp: procedural heightfield brushes on Vulkan compute (de Carpentier & Bidarra 2009).
//!
//! Layers, bottom to top (docs/ARCHITECTURE.md):
//! * [`gpu`]: the Vulkan layer, reusable outside Scarp: knows no terrain.
//! * [`pages`]: the page store: a document's named sparse fields of GPU pages, versions, history.
//! * [`noise`], [`brush`]: noise and brush kernels with their CPU twins; the brush engine paints a
//!   field of the page store. [`render`] draws the page store and never sees the brush engine.
//! * [`layers`]: the layer stack and its composite, folded on the GPU per dirty page.
//! * [`document`]: the open document: its page store, the brush engine painting it, its layer
//!   stack, the composite and the undo log. Nothing per tool.
//! * [`edit`]: the operations a document takes beyond painting strokes (erosion, paths), one
//!   file each, with the GPU state each needs ([`edit::Tools`], kept beside the document).
//! * [`session`]: the open document and its tools, its journal, saving and recovery.
//! * [`terrain`]: height files and projects. [`shared_constants`]: constants GLSL shares.
//! * The edges: [`editor`] (the window), [`cli`] (the command line), [`bench`], [`gallery`].

pub mod atomic_file;
pub mod bench;
pub mod brush;
pub mod cli;
pub mod document;
pub mod edit;
pub mod editor;
pub mod erosion;
pub mod falloff;
pub mod gallery;
pub mod geology;
pub mod gpu;
pub mod journal;
pub mod layers;
pub mod maps;
pub mod mesh;
pub mod noise;
pub mod pages;
pub mod profile;
pub mod project;
pub mod render;
pub mod rivers;
pub mod session;
pub mod shared_constants;
pub mod terrain;
pub mod trace;
pub mod wear;

//! Layers: a document's base height field plus an ordered stack of layers, each with a mode,
//! an opacity, visibility, a lock and three sparse fields of the page store (value `V`, alpha
//! `A`, mask `M`), folded into the composite the renderer draws (docs/layers.md).
//!
//! * [`stack`]: the stack as data, the operations on it, and the CPU twin of the fold.
//! * [`shared`]: the push-constant structs of the layer kernels (mirrored in GLSL).
//! * [`rules`]: procedural masks (height, slope, curvature bands) and their CPU twin.
//! * [`composite`]: the fold on the GPU, per dirty page, with a cache of the layers below the
//!   selected one ([`composite::Compositor`]).
//!
//! Uses `gpu` and `pages` only: painting a layer is the document's (`document::Document` routes
//! strokes to the selected layer's fields).

pub mod composite;
pub mod rules;
pub mod shared;
pub mod stack;

pub use composite::{CompositeStats, Compositor, BASE_FIELD};
pub use rules::{Band, MaskRules};
pub use stack::{
    blend, field_name, fold_texel, Changes, Layer, LayerFiles, LayerOp, Mode, OpError, Part,
    Selection, Stack, StackFile, BASE, UPLIFT,
};

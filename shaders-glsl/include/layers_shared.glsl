// Push-constant structs of the layer kernels, mirrored field for field in src/layers/shared.rs
// (std430 push-constant layout; tests/shared_layout.rs checks every offset).
#ifndef SCARP_LAYERS_SHARED_GLSL
#define SCARP_LAYERS_SHARED_GLSL

// layers/load.comp and store.comp (include/fold_body.glsl).
struct FoldPush {
    ivec2 size;
    // Height where the source has no page.
    float flat_height;
    // 1: the source has a page.
    uint present;
    float height_min;
    float height_range;
};

// layers/blend.comp: up to four layers folded in one pass.
struct BlendPush {
    ivec2 size;
    // Layers folded (1..4).
    int count;
    // Bit 3i + part: that field of layer i has a page (else its flat value).
    uint present;
    // Mode of layer i (LAYER_*) in bits 2i..2i+1.
    uint modes;
    // Height where the source has no page (blend_from, blend_through; bit 12 of `present`).
    float flat_height;
    uint pad1;
    uint pad2;
    // visible x opacity of each layer.
    vec4 weights;
    // Values of inputs without a page: value, alpha, mask of each layer.
    vec4 flat_value;
    vec4 flat_alpha;
    vec4 flat_mask;
};

// layers/mask_rules.comp.
struct RulesPush {
    // First document texel of the page, and its size.
    ivec2 origin;
    ivec2 size;
    ivec2 doc;
    // Page side of the document (texels).
    int side;
    // Bit slot: that source page has an image (else `flat_height`).
    uint present;
    float flat_height;
    // Bit 0: height band, 1: slope band, 2: curvature band.
    uint rules;
    uint pad0;
    uint pad1;
    // lo, hi, soft of each band.
    vec4 height_band;
    vec4 slope_band;
    vec4 curvature_band;
};

#endif

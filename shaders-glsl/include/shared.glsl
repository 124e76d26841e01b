// Structs that cross the CPU/GPU line for noise and brushes. Mirrors src/noise/shared.rs and
// src/brush/shared.rs field for field; tests/shared_layout.rs checks every field's offset through
// the echo kernels in shaders-glsl/test/. Kind indices come from constants.glsl (generated from
// src/shared_constants.rs).
#ifndef SCARP_SHARED_GLSL
#define SCARP_SHARED_GLSL

#include "constants.glsl"

// Every parameter of the reference noise functions. All fields are 4 bytes: no padding anywhere.
struct NoiseParams {
    vec2 offset;          // p = offset + scale * (x, y)
    float scale;
    int seed;             // octave i uses seed + i
    int octaves;
    float lacunarity;
    float gain;
    float warp;           // swiss
    float gain1;          // jordan
    float warp0;          // jordan
    float damp0;          // jordan
    float damp;           // jordan
    float damp_scale;     // jordan
    float alpha;          // erosive: feature displacement
    float beta;           // erosive: roughness near valleys
    float prewarp_amount; // eq. 8 alpha; 0 = off
    float prewarp_scale;  // eq. 8 beta
    int prewarp_octaves;
    float power;          // T_post exponent (sign-preserving); 1 = off
    int kind;             // NOISE_*
};

// Which rows of a W x H grid one dispatch covers.
struct NoiseGrid {
    uint width;
    uint rows;
    uint row_offset;
    uint _pad;
};

// Brush kinds: BRUSH_* (constants.glsl) select the pointwise kernel's specialization.

// Falloff ramps: FALLOFF_* (constants.glsl).

// One brush instance, in document texels. strength = brush strength x pressure, signed.
struct BrushInstance {
    vec2 center;
    float radius;
    float inner_radius;
    float strength;
    float direction;      // local stroke direction, radians
    vec2 axis;            // directional: unit compression axis; stamp: unit rotation (CPU-computed)
};

// One batched pass over one page: instances [first_instance, first_instance + instance_count)
// applied in order to rect_size texels from rect_min (page-local).
struct BrushPass {
    ivec2 page_origin;
    uint rect_min_packed;   // page-local x | y << 16 (pages are at most 2048 texels)
    uint rect_size_packed;  // width | height << 16
    uint first_instance;
    uint instance_count;
    int falloff;
    float level_target;   // level: height under the stroke's first sample, before the stroke
    NoiseParams noise;
    float brush_param;    // directional: compression ratio; stamp: stamp side / brush diameter
    float height_min;     // r16 pages: the document's height range
    float height_range;
    float falloff_power;  // FALLOFF_POWER's exponent (last: `noise` must stay 8-byte aligned)
};

// One smooth/contrast pass: one instance over one page, taps from the 3x3 neighbourhood of pages.
struct SmoothPass {
    uint first_instance; // instances [first_instance, + instance_count) of the stroke, in order
    uint instance_count;
    ivec2 page_origin;   // document texel of this page's (0, 0)
    ivec2 self_size;     // this page's extent
    ivec2 doc_size;
    ivec2 rect_min;      // page-local first texel written
    ivec2 rect_size;
    int page_size;       // extent of a whole page (left/top neighbours)
    int falloff;
    float falloff_power;
    float flat_height;   // height of neighbours that hold no memory
    uint present_mask;   // bit n: neighbour n (row-major, 4 = this page) is bound
    float height_min;    // r16 pages: the document's height range
    float height_range;
};

#endif

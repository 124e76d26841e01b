// The lighting field (render::lighting): push constants of render/lighting.comp and
// render/light_gather.comp, mirrored in
// src/render/lighting.rs (tests/shared_layout.rs checks every offset), and the packing of a
// texel: round(sun x LIGHT_LEVELS) + 1024 x round(ao x LIGHT_LEVELS), an integer below 2^20
// held exactly by an r32f texel.
#ifndef SCARP_LIGHTING_SHARED_GLSL
#define SCARP_LIGHTING_SHARED_GLSL

struct LightPush {
    ivec2 origin;        // first texel of the page
    ivec2 first;         // page-local first texel of the region lit
    ivec2 size;          // texels of the region lit (inside the page)
    ivec2 doc;           // document size
    ivec2 coarse_size;   // texels of the height's coarse level
    vec2 sun_dir;        // towards the sun in texel space (x: column, y: row), unit length
    int side;            // page size
    uint present;        // bit (dy + 1) * 3 + (dx + 1): that neighbour has an image
    float tan_lo;        // horizon tangent at which the sun starts to set (visibility 1 below)
    float tan_hi;        // and is gone (visibility 0 above)
    float vertical_scale;
    float flat_height;   // where a neighbour has no image
    float height_min;    // r16 range
    float height_range;
    int max_dist;        // LIGHT_MAX_DIST
    int unused;
    ivec2 gather_first;  // document texel of the gathered heights' first texel
    ivec2 gather_size;   // texels gathered (inside the page and its neighbours)
};

// The occlusion horizons' directions, and their taps (d += max(1, d / 2) up to AO_RADIUS).
const ivec2 AO_DIRS[8] = ivec2[8](ivec2(1, 0), ivec2(1, 1), ivec2(0, 1), ivec2(-1, 1),
                                  ivec2(-1, 0), ivec2(-1, -1), ivec2(0, -1), ivec2(1, -1));
#define AO_TAPS 10
const int AO_D[AO_TAPS] = int[AO_TAPS](1, 2, 3, 4, 6, 9, 13, 19, 28, 42);

// Sun visibility and occlusion of a packed texel.
vec2 unpackLight(float v) {
    uint u = uint(v);
    return vec2(float(u & 1023u), float(u >> 10u)) * (1.0 / float(LIGHT_LEVELS));
}

#endif

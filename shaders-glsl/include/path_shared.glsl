// Path push constants and segments (src/brush/shared.rs, field for field;
// tests/shared_layout.rs). CPU twin of the kernel: src/brush/path.rs.
#ifndef SCARP_PATH_SHARED_GLSL
#define SCARP_PATH_SHARED_GLSL

struct PathPush {
    ivec2 rect_origin;   // document texel of the rect's first texel
    uvec2 rect_size;
    uint tiles_x;        // tiles per row of the rect
    float half_width;
    float falloff;
    float signed_depth;  // < 0 below the base (carve, grade), > 0 above (raise)
    uint mode;           // 0 carve, 1 raise, 2 grade
    uint profile;        // 0 flat, 1 U, 2 V
    uvec2 _pad;
};

struct PathSegment {
    vec2 a;
    vec2 b;
    float base_a;
    float base_b;
    vec2 _pad;
};

#define PATH_TILE 16u
#define PATH_CARVE 0u
#define PATH_RAISE 1u
#define PATH_PROFILE_U 1u
#define PATH_PROFILE_V 2u

#endif

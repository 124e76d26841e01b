// The world heights a lighting job reads, gathered into one r32f image: the rectangle
// gather_first + [0, gather_size) of the document, inside the page and its eight neighbours
// (decoded, x vertical scale; flat_height where a neighbour has no image). One image read per
// tap instead of a choice among nine in render/lighting.comp. CPU twin: the world heights of
// render::lighting::light_texel. Needs HEIGHT_R16 defined or not first.
#extension GL_GOOGLE_include_directive : require
#include "constants.glsl"
#include "height_format.glsl"
#include "lighting_shared.glsl"

layout(local_size_x = BRUSH_GROUP_X, local_size_y = BRUSH_GROUP_Y) in;
// Height pages at (dx, dy) in -1..1 around the page: binding (dy + 1) * 3 + (dx + 1).
layout(set = 0, binding = 0, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s0;
layout(set = 0, binding = 1, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s1;
layout(set = 0, binding = 2, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s2;
layout(set = 0, binding = 3, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s3;
layout(set = 0, binding = 4, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s4;
layout(set = 0, binding = 5, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s5;
layout(set = 0, binding = 6, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s6;
layout(set = 0, binding = 7, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s7;
layout(set = 0, binding = 8, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s8;
layout(set = 0, binding = 9, r32f) uniform writeonly image2D gathered;
layout(push_constant) uniform Push { LightPush p; } pc;

float loadSlot(int s, ivec2 q) {
    switch (s) {
    case 0: return imageLoad(s0, q).r;
    case 1: return imageLoad(s1, q).r;
    case 2: return imageLoad(s2, q).r;
    case 3: return imageLoad(s3, q).r;
    case 4: return imageLoad(s4, q).r;
    case 5: return imageLoad(s5, q).r;
    case 6: return imageLoad(s6, q).r;
    case 7: return imageLoad(s7, q).r;
    default: return imageLoad(s8, q).r;
    }
}

void main() {
    ivec2 i = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(i, pc.p.gather_size))) {
        return;
    }
    ivec2 rel = pc.p.gather_first + i - pc.p.origin;
    ivec2 d = ivec2(rel.x < 0 ? -1 : (rel.x >= pc.p.side ? 1 : 0),
                    rel.y < 0 ? -1 : (rel.y >= pc.p.side ? 1 : 0));
    int slot = (d.y + 1) * 3 + (d.x + 1);
    float h = pc.p.flat_height;
    if ((pc.p.present & (1u << uint(slot))) != 0u) {
        h = decodeHeight(loadSlot(slot, rel - d * pc.p.side), pc.p.height_min, pc.p.height_range);
    }
    precise float w = h * pc.p.vertical_scale;
    imageStore(gathered, i, vec4(w));
}

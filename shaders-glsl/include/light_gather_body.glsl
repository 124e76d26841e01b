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
#include "nine_pages.glsl"
// Binding 9: the gathered heights.
layout(set = 0, binding = 9, r32f) uniform writeonly image2D gathered;
layout(push_constant) uniform Push { LightPush p; } pc;

void main() {
    ivec2 i = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(i, pc.p.gather_size))) {
        return;
    }
    ivec2 rel = pc.p.gather_first + i - pc.p.origin;
    float h = nineHeight(rel, pc.p.side, pc.p.present, pc.p.flat_height, pc.p.height_min,
                         pc.p.height_range);
    precise float w = h * pc.p.vertical_scale;
    imageStore(gathered, i, vec4(w));
}

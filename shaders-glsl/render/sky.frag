#version 460
// The analytic sky behind the terrain (VIEW_LOOK): include/look.glsl's skyColour along the
// pixel's view ray, exposed, tone-mapped and sRGB-encoded like the terrain.
#extension GL_GOOGLE_include_directive : require
#include "render_shared.glsl"

layout(set = 0, binding = 0, std140) uniform Frame { FrameData frame; };
#include "look.glsl"

layout(location = 0) in vec2 in_ndc;
layout(location = 0) out vec4 out_color;

void main() {
    // A point on the near plane (1 in reverse-Z; the far plane may be at infinity) and the eye.
    vec4 near = frame.inv_view_proj * vec4(in_ndc, 1.0, 1.0);
    vec3 dir = normalize(near.xyz / near.w - frame.eye.xyz);
    vec3 c = skyColour(dir, normalize(frame.light.xyz));
    out_color = vec4(present(c), 1.0);
}

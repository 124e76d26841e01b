#version 460
// Copies the shaded image (render/shade.comp, already encoded) into the target, whatever its
// format, in the rendering that draws the editor's interface on top.
layout(set = 0, binding = 0) uniform sampler2D shaded;
layout(location = 0) out vec4 out_color;

void main() {
    out_color = vec4(texelFetch(shaded, ivec2(gl_FragCoord.xy), 0).rgb, 1.0);
}

#version 460
// The sky: one triangle over the whole target at the far plane (0 in reverse-Z); the fragment
// shader turns each pixel into a view ray.
#extension GL_GOOGLE_include_directive : require

layout(location = 0) out vec2 out_ndc;

void main() {
    vec2 p = vec2(float((gl_VertexIndex << 1) & 2), float(gl_VertexIndex & 2)) * 2.0 - 1.0;
    out_ndc = p;
    gl_Position = vec4(p, 0.0, 1.0);
}

#version 460
// One triangle over the whole target (the composition of the shaded image).

void main() {
    vec2 p = vec2(float((gl_VertexIndex << 1) & 2), float(gl_VertexIndex & 2)) * 2.0 - 1.0;
    gl_Position = vec4(p, 0.0, 1.0);
}

// Layout oracle helpers for tests/shared_layout.rs: each echo kernel writes every field of one
// shared struct, in declaration order, as raw 32-bit words; the test fills the Rust struct with
// distinct words and compares. A field at another offset in GLSL than in Rust shows up as a word
// out of place.
#ifndef SCARP_ECHO_GLSL
#define SCARP_ECHO_GLSL

layout(set = 0, binding = 0, std430) writeonly buffer Echo { uint words[]; };

uint echoAt = 0u;
void putF(float v) { words[echoAt++] = floatBitsToUint(v); }
void putI(int v) { words[echoAt++] = uint(v); }
void putU(uint v) { words[echoAt++] = v; }
void putF2(vec2 v) { putF(v.x); putF(v.y); }
void putI2(ivec2 v) { putI(v.x); putI(v.y); }
void putU2(uvec2 v) { putU(v.x); putU(v.y); }
void putF4(vec4 v) { putF(v.x); putF(v.y); putF(v.z); putF(v.w); }
void putI4(ivec4 v) { putI(v.x); putI(v.y); putI(v.z); putI(v.w); }

#ifdef SCARP_SHARED_GLSL
void putNoise(NoiseParams n) {
    putF2(n.offset); putF(n.scale); putI(n.seed); putI(n.octaves); putF(n.lacunarity);
    putF(n.gain); putF(n.warp); putF(n.gain1); putF(n.warp0); putF(n.damp0); putF(n.damp);
    putF(n.damp_scale); putF(n.alpha); putF(n.beta); putF(n.prewarp_amount);
    putF(n.prewarp_scale); putI(n.prewarp_octaves); putF(n.power); putI(n.kind);
}

void putInstance(BrushInstance b) {
    putF2(b.center); putF(b.radius); putF(b.inner_radius); putF(b.strength); putF(b.direction);
    putF2(b.axis);
}
#endif

#endif

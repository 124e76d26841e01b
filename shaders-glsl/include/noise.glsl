// Scarp's noise library: 2D gradient noise with an integer seed and every composite noise of the
// reference texts (Scape parts 2 and 3, de Carpentier & Bidarra 2009 section 5).
//
// Tables (see src/noise/tables.rs for how they are built and why they are lattice-consistent):
//   uPermTable: 256x256 RGBA8_UINT; texel (col x&255, row y&255) holds the hashes of the four
//               corners of lattice cell (x, y): R=(x,y) G=(x,y+1) B=(x+1,y) A=(x+1,y+1).
//   uGradTable: 256x256 RGBA8_UINT; for seed s, g1 = grad[row (G+s)&255][col (R+s)&255] gives the
//               gradients of corners (0,0) in xy and (0,1) in zw, g2 = grad[(A+s)][(B+s)] those of
//               (1,0) and (1,1). A component is byte * 2/255 - 1.
// Both are read with integer texelFetch: exact hashing, no filtering, no normalized coordinates.
// The CPU twin of every function here is in src/noise/cpu.rs; keep them in step.
// Sample positions can be large (offsets of thousands, times octave frequencies), where one
// rounding step is worth a visible fraction of a cell: every position that mixes a multiply and
// an add is `precise`, so no driver fuses it into an fma and GPU and CPU round identically.
#ifndef SCARP_NOISE_GLSL
#define SCARP_NOISE_GLSL

#include "shared.glsl"

#ifndef NOISE_TABLE_SET
#define NOISE_TABLE_SET 0
#endif
layout(set = NOISE_TABLE_SET, binding = 0) uniform usampler2D uPermTable;
layout(set = NOISE_TABLE_SET, binding = 1) uniform usampler2D uGradTable;

// Seeds of the two pre-warp fields (eq. 8's e1, e2): far from the main octaves' seed + i, i < 32.
#define PREWARP_SEED_X 101
#define PREWARP_SEED_Y 211

vec4 decodeGrad(uvec4 t) {
    return vec4(t) * (2.0 / 255.0) - 1.0;
}

// Shared-memory gradients. The grad table is (G[col], G[row]) for one 256-entry table G (see
// src/noise/tables.rs), so a compute kernel can stage G in shared memory once per workgroup and
// read a corner pair's gradients there instead of through the texture path: a kernel defines
// NOISE_SHARED_GRADIENTS as the constant_id of a switch before including this file and calls
// stageNoiseGradients() from uniform control flow before any noise. Off by default: on an H200
// it measured 3-25x slower than the texture fetches (docs/PERF.md).
#ifdef NOISE_SHARED_GRADIENTS
layout(constant_id = NOISE_SHARED_GRADIENTS) const bool SHARED_GRADIENTS = false;
shared vec2 sNoiseGrad[256];

void stageNoiseGradients() {
    if (SHARED_GRADIENTS) {
        uint n = gl_WorkGroupSize.x * gl_WorkGroupSize.y * gl_WorkGroupSize.z;
        for (uint i = gl_LocalInvocationIndex; i < 256u; i += n) {
            sNoiseGrad[i] = decodeGrad(texelFetch(uGradTable, ivec2(int(i), 0), 0)).xy;
        }
        barrier();
    }
}
#endif

// Corner gradients of lattice cell i (= floor(p)): g1 = corners (0,0),(0,1); g2 = (1,0),(1,1).
// The cell index wraps in float arithmetic (exact for every float), so no coordinate can overflow
// an int conversion.
void cellGradients(vec2 i, int seed, out vec4 g1, out vec4 g2) {
    ivec2 cell = ivec2(i - 256.0 * floor(i * (1.0 / 256.0)));
    ivec4 h = ivec4(texelFetch(uPermTable, cell, 0)) + seed;
#ifdef NOISE_SHARED_GRADIENTS
    if (SHARED_GRADIENTS) {
        ivec4 k = h & 255;
        g1 = vec4(sNoiseGrad[k.x], sNoiseGrad[k.y]);
        g2 = vec4(sNoiseGrad[k.z], sNoiseGrad[k.w]);
        return;
    }
#endif
    g1 = decodeGrad(texelFetch(uGradTable, h.xy & 255, 0));
    g2 = decodeGrad(texelFetch(uGradTable, h.zw & 255, 0));
}

// Quintic fade 6f^5 - 15f^4 + 10f^3.
vec2 fade(vec2 f) {
    return f * f * f * (f * (f * 6.0 - 15.0) + 10.0);
}

// Bilinear blend coefficients of the four corner planes at f: n = k.x + k.y wx + k.z wy + k.w wx wy.
vec4 blendCoefficients(vec4 g1, vec4 g2, vec2 f) {
    float a = dot(g1.xy, f);
    float b = dot(g2.xy, f - vec2(1.0, 0.0));
    float c = dot(g1.zw, f - vec2(0.0, 1.0));
    float d = dot(g2.zw, f - vec2(1.0, 1.0));
    return vec4(a, b - a, c - a, a - b - c + d);
}

// Perlin gradient noise, roughly in [-1, 1] (the texts' n * 1.5 scaling); 0 at lattice points.
float perlinNoise(vec2 p, int seed) {
    vec2 i = floor(p);
    vec2 f = p - i;
    vec4 g1, g2;
    cellGradients(i, seed, g1, g2);
    vec2 w = fade(f);
    vec4 k = blendCoefficients(g1, g2, f);
    return (k.x + k.y * w.x + k.z * w.y + k.w * w.x * w.y) * 1.5;
}

// IQ's "pseudo derivative" variant (Scape part 2): (n, dx, dy) * 1.5 where dx, dy omit the corner
// gradient terms. Kept as written: iqTurbulence's look depends on it.
vec3 perlinNoisePseudoDeriv(vec2 p, int seed) {
    vec2 i = floor(p);
    vec2 f = p - i;
    vec4 g1, g2;
    cellGradients(i, seed, g1, g2);
    vec2 w = fade(f);
    vec2 dw = f * f * (f * (f * 30.0 - 60.0) + 30.0);
    vec4 k = blendCoefficients(g1, g2, f);
    float n = k.x + k.y * w.x + k.z * w.y + k.w * w.x * w.y;
    return vec3(n, dw.x * (k.y + k.w * w.y), dw.y * (k.z + k.w * w.x)) * 1.5;
}

// (n, dn/dx, dn/dy) * 1.5 with the exact analytic gradient of perlinNoise.
vec3 perlinNoiseDeriv(vec2 p, int seed) {
    vec2 i = floor(p);
    vec2 f = p - i;
    vec4 g1, g2;
    cellGradients(i, seed, g1, g2);
    vec2 w = fade(f);
    vec2 dw = f * f * (f * (f * 30.0 - 60.0) + 30.0);
    vec4 k = blendCoefficients(g1, g2, f);
    float n = k.x + k.y * w.x + k.z * w.y + k.w * w.x * w.y;
    // d/dx of each corner plane is its gradient's x; likewise for y.
    vec4 kx = vec4(g1.x, g2.x - g1.x, g1.z - g1.x, g1.x - g2.x - g1.z + g2.z);
    vec4 ky = vec4(g1.y, g2.y - g1.y, g1.w - g1.y, g1.y - g2.y - g1.w + g2.w);
    float dx = kx.x + kx.y * w.x + kx.z * w.y + kx.w * w.x * w.y + dw.x * (k.y + k.w * w.y);
    float dy = ky.x + ky.y * w.x + ky.z * w.y + ky.w * w.x * w.y + dw.y * (k.z + k.w * w.x);
    return vec3(n, dx, dy) * 1.5;
}

// fBm, called "turbulence" in Scape (eq. 4).
float fbmNoise(vec2 p, int seed, int octaves, float lacunarity, float gain) {
    float sum = 0.0, freq = 1.0, amp = 1.0;
    for (int i = 0; i < octaves; i++) {
        sum += amp * perlinNoise(p * freq, seed + i);
        freq *= lacunarity;
        amp *= gain;
    }
    return sum;
}

// T_in(h) = |h| (eq. 7).
float billowyNoise(vec2 p, int seed, int octaves, float lacunarity, float gain) {
    float sum = 0.0, freq = 1.0, amp = 1.0;
    for (int i = 0; i < octaves; i++) {
        sum += amp * abs(perlinNoise(p * freq, seed + i));
        freq *= lacunarity;
        amp *= gain;
    }
    return sum;
}

// T_in(h) = 1 - |h| (eq. 6).
float ridgedNoise(vec2 p, int seed, int octaves, float lacunarity, float gain) {
    float sum = 0.0, freq = 1.0, amp = 1.0;
    for (int i = 0; i < octaves; i++) {
        sum += amp * (1.0 - abs(perlinNoise(p * freq, seed + i)));
        freq *= lacunarity;
        amp *= gain;
    }
    return sum;
}

// Quilez: finer octaves are damped where the summed (pseudo) slope of coarser ones is large.
float iqNoise(vec2 p, int seed, int octaves, float lacunarity, float gain) {
    float sum = 0.5, freq = 1.0, amp = 1.0;
    vec2 dsum = vec2(0.0);
    for (int i = 0; i < octaves; i++) {
        vec3 n = perlinNoisePseudoDeriv(p * freq, seed + i);
        dsum += n.yz;
        sum += amp * n.x / (1.0 + dot(dsum, dsum));
        freq *= lacunarity;
        amp *= gain;
    }
    return sum;
}

// Swiss turbulence (Scape part 3): ridged octaves warped along the summed gradient, amplitude
// faded by the running height.
float swissNoise(vec2 p, int seed, int octaves, float lacunarity, float gain, float warp) {
    float sum = 0.0, freq = 1.0, amp = 1.0;
    vec2 dsum = vec2(0.0);
    for (int i = 0; i < octaves; i++) {
        precise vec2 q = (p + warp * dsum) * freq;
        vec3 n = perlinNoiseDeriv(q, seed + i);
        sum += amp * (1.0 - abs(n.x));
        dsum += amp * n.yz * -n.x;
        freq *= lacunarity;
        amp *= gain * clamp(sum, 0.0, 1.0);
    }
    return sum;
}

// Jordan turbulence (Scape part 3): squared octaves, separate warp and damping sums, the coarsest
// octave handled apart so its influence has its own gain, warp and damping.
float jordanNoise(vec2 p, int seed, int octaves, float lacunarity, float gain1, float gain,
                  float warp0, float warp, float damp0, float damp, float damp_scale) {
    vec3 n = perlinNoiseDeriv(p, seed);
    vec3 n2 = n * n.x;
    float sum = n2.x;
    vec2 dsum_warp = warp0 * n2.yz;
    vec2 dsum_damp = damp0 * n2.yz;
    float amp = gain1;
    float freq = lacunarity;
    float damped_amp = amp * gain;
    for (int i = 1; i < octaves; i++) {
        precise vec2 q = p * freq + dsum_warp;
        n = perlinNoiseDeriv(q, seed + i);
        n2 = n * n.x;
        sum += damped_amp * n2.x;
        dsum_warp += warp * n2.yz;
        dsum_damp += damp * n2.yz;
        freq *= lacunarity;
        amp *= gain;
        damped_amp = amp * (1.0 - damp_scale / (1.0 + dot(dsum_damp, dsum_damp)));
    }
    return sum;
}

// Erosive noise (paper section 5.4): ridged bands whose input is pushed along the approximate
// ridge gradient G = -N * grad N (eq. 9), scaled down at low intermediate heights.
float erosiveNoise(vec2 p, int seed, int octaves, float lacunarity, float gain, float alpha, float beta) {
    float freq = 1.0, amp = 1.0, sum = 0.0, s = 1.0;
    vec2 d = vec2(0.0);
    for (int j = 0; j < octaves; j++) {
        vec3 n = perlinNoiseDeriv(freq * (p + d), seed + j);
        sum += amp * s * (1.0 - abs(n.x));
        d += amp * alpha * s * (-n.x * n.yz);
        s *= clamp(beta * sum, 0.0, 1.0);
        amp *= gain;
        freq *= lacunarity;
    }
    return sum;
}

// Input pre-warping (eq. 8 with N replaced by fBm of its own octave count, as the texts suggest).
vec2 prewarp(NoiseParams P, vec2 p) {
    if (P.prewarp_amount == 0.0 || P.prewarp_octaves <= 0) {
        return p;
    }
    vec2 q = p * P.prewarp_scale;
    vec2 displacement = vec2(
        fbmNoise(q, P.seed + PREWARP_SEED_X, P.prewarp_octaves, P.lacunarity, P.gain),
        fbmNoise(q, P.seed + PREWARP_SEED_Y, P.prewarp_octaves, P.lacunarity, P.gain));
    precise vec2 warped = p + P.prewarp_amount * displacement;
    return warped;
}

// T_post (eq. 5): a sign-preserving power, so signed noise keeps its sign.
float postPower(float h, float power) {
    return power == 1.0 ? h : sign(h) * pow(abs(h), power);
}

// B(p) for noise kind `kind` at noise-space position p (before pre-warping).
float noiseAt(int kind, NoiseParams P, vec2 p) {
    vec2 q = prewarp(P, p);
    float h;
    switch (kind) {
    case NOISE_PERLIN:  h = perlinNoise(q, P.seed); break;
    case NOISE_FBM:     h = fbmNoise(q, P.seed, P.octaves, P.lacunarity, P.gain); break;
    case NOISE_BILLOWY: h = billowyNoise(q, P.seed, P.octaves, P.lacunarity, P.gain); break;
    case NOISE_RIDGED:  h = ridgedNoise(q, P.seed, P.octaves, P.lacunarity, P.gain); break;
    case NOISE_IQ:      h = iqNoise(q, P.seed, P.octaves, P.lacunarity, P.gain); break;
    case NOISE_SWISS:   h = swissNoise(q, P.seed, P.octaves, P.lacunarity, P.gain, P.warp); break;
    case NOISE_JORDAN:
        h = jordanNoise(q, P.seed, P.octaves, P.lacunarity, P.gain1, P.gain, P.warp0, P.warp,
                        P.damp0, P.damp, P.damp_scale);
        break;
    default:            h = erosiveNoise(q, P.seed, P.octaves, P.lacunarity, P.gain, P.alpha, P.beta); break;
    }
    return postPower(h, P.power);
}

#endif

// Geology push constants (src/geology/shared.rs, field for field; tests/shared_layout.rs) and the
// helpers both stream-power kernels share. The grid is the region R, row-major, W x H; heights z
// in metres. CPU twin: src/geology/cpu.rs (docs/geology.md states the model).
#ifndef SCARP_GEOLOGY_SHARED_GLSL
#define SCARP_GEOLOGY_SHARED_GLSL

struct GeologyPush {
    ivec2 size;          // W, H of R
    float tau;           // texel size (m)
    float diag;          // tau * sqrt(2)
    float tau2;          // tau * tau
    float a0;            // texel area (m^2)
    float erodibility;   // K
    float m;
    float n;
    float diffusion;     // kappa (m^2/yr)
    float dt;            // yr
    float uplift;        // U (m/yr)
    float base_level;    // z at and below which a texel is an outlet, when has_base == 1
    int has_base;
    int measure;         // 1: fold max |z' - z| / steady_unit into the statistics buffer
    float steady_unit;   // dt * U (dt where U = 0)
    int uniform_uplift;  // 1: u is 1 everywhere, and the update does not read it
    float inv_tau;       // 1 / tau and 1 / diag, rounded once on the host: slopes are drops
    float inv_diag;      // times these (a division may differ from the CPU's in the last bit)
    int multi_flow;      // 1: area to every lower neighbour by slope^flow_exponent; 0: D8
    float flow_exponent;
    int critical;        // 1: no texel ends above a neighbour q by more than its rise:
    float rise_axis;     // tan(critical slope) * tau for the axis neighbours,
    float rise_diag;     // tan(critical slope) * tau * sqrt(2) for the diagonal ones
    int stationary;      // 1: solve each texel's steady-state equation (Jacobi); 0: step dt
    float relaxation;    // stationary: z + relaxation * (solved - z) (damped Jacobi)
};

// The receivers' element: a byte where the device has storageBuffer8BitAccess (the
// *_bytes.comp variants), else an int.
#ifdef GEOLOGY_RECEIVER_BYTES
#define RECEIVER uint8_t
#else
#define RECEIVER int
#endif

#ifndef GEOLOGY_NO_KERNEL
#include "constants.glsl"
layout(local_size_x = GEOLOGY_GROUP_X, local_size_y = GEOLOGY_GROUP_Y, local_size_z = 1) in;
layout(push_constant) uniform Push { GeologyPush g; } pc;

// Neighbour offsets in the model's order k = 0..7; the neighbour k's receiver is p when it is
// (k + 4) % 8.
const ivec2 OFFSETS[8] = ivec2[8](ivec2(0, 1), ivec2(1, 1), ivec2(1, 0), ivec2(1, -1),
                                  ivec2(0, -1), ivec2(-1, -1), ivec2(-1, 0), ivec2(-1, 1));
const int NO_RECEIVER = 8;

int texelIndex(ivec2 p) {
    return p.y * pc.g.size.x + p.x;
}

bool inRegion(ivec2 p) {
    return all(greaterThanEqual(p, ivec2(0))) && all(lessThan(p, pc.g.size));
}

// Not on R's border: every neighbour is in R (the kernels' fast path, without bounds tests).
bool interior(ivec2 p) {
    return all(greaterThan(p, ivec2(0))) && all(lessThan(p, pc.g.size - 1));
}

// The index of p's neighbour k, p's index being i.
int neighbourIndex(int i, int k) {
    return i + OFFSETS[k].y * pc.g.size.x + OFFSETS[k].x;
}

// 1 / delta_k, as the host rounded it: s_k = drop * invDelta(k) on the GPU and in the twin.
float invDelta(int k) {
    return (k & 1) == 1 ? pc.g.inv_diag : pc.g.inv_tau;
}

// x^e with the exponents the model is used with taken exactly (1: x, 0.5: sqrt, 2: x*x), as the
// CPU twin's `spow` takes them: pow itself differs between devices in the last bits.
float spow(float x, float e) {
    if (e == 1.0) {
        return x;
    }
    if (e == 0.5) {
        return sqrt(x);
    }
    if (e == 2.0) {
        precise float sq = x * x;
        return sq;
    }
    return pow(x, e);
}
#endif

#endif

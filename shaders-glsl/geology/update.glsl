// Stream power, steps 2 and 3 (Jacobi: reads z and A, writes z' and A'): the drainage area
// A' = a0 + the areas of the neighbours that drain here (with multi-flow routing, each
// neighbour's area times its weight toward here, slope^flow_exponent over the sum of its
// lower neighbours'), then for a texel that is not an outlet
// z* = z - dt (K A'^m S^n - kappa L), held at or above its receiver, plus dt U u; with the
// threshold hillslope, then at most min over the neighbours of z_q + tan(theta) delta_q. With
// `stationary` (solving for the steady state), z* and the uplift are replaced by a damped step
// toward the height that solves the texel's steady-state equation (stationary() below). A height
// that would not be finite stays as it was. CPU twin: geology::cpu::State::step.
#include "geology_shared.glsl"

layout(set = 0, binding = 0, std430) readonly buffer Z { float z[]; };
layout(set = 0, binding = 1, std430) readonly buffer A { float a[]; };
layout(set = 0, binding = 2, std430) readonly buffer U { float u[]; };
layout(set = 0, binding = 3, std430) readonly buffer R { RECEIVER r[]; };
layout(set = 0, binding = 4, std430) writeonly buffer ZOut { float z_out[]; };
layout(set = 0, binding = 5, std430) writeonly buffer AOut { float a_out[]; };
layout(set = 0, binding = 6, std430) buffer Stats { uint steady_bits; };
layout(set = 0, binding = 7, std430) readonly buffer W { float inv_weights[]; };

// A power of two (the tree below halves it).
const uint GROUP = uint(GEOLOGY_GROUP_X * GEOLOGY_GROUP_Y);
shared float group_max[GROUP];

// The height of a texel that is not an outlet solving its steady-state equation, its neighbours
// held (one Jacobi sweep of the stationary model, GeologyPush::stationary): K A^m S = U u +
// kappa L (n = 1, which the host checks) with the stream-power term f (z - zq), f = K A^m /
// delta, so z = (f zq + U u + c sum) / (f + 4c), c = kappa / tau^2, at least zq + dt U u
// (the receiver clamp's steady state); a pit solves U u + kappa L = 0, or rises a step of uplift
// without creep. CPU twin: geology::cpu::stationary.
float stationary(float zp, float area, int k, float zq, float sum, float up) {
    precise float c = pc.g.diffusion / pc.g.tau2;
    precise float source = pc.g.uplift * up;
    precise float lift = (pc.g.dt * pc.g.uplift) * up;
    if (k != NO_RECEIVER) {
        precise float f = (pc.g.erodibility * spow(area, pc.g.m)) * invDelta(k);
        precise float zs = ((f * zq + source) + c * sum) / (f + 4.0 * c);
        return max(zs, zq + lift);
    }
    if (c > 0.0) {
        precise float zs = (source + c * sum) / (4.0 * c);
        return zs;
    }
    precise float zs = zp + lift;
    return zs;
}

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    float change = 0.0;
    if (all(lessThan(p, pc.g.size))) {
        int i = texelIndex(p);
        float zp = z[i];
        precise float area = pc.g.a0;
        if (pc.g.multi_flow == 1) {
            for (int k = 0; k < 8; k++) {
                ivec2 q = p + OFFSETS[k];
                if (!inRegion(q)) {
                    continue;
                }
                int j = texelIndex(q);
                // q's slope toward p: the same distance as p's toward q.
                precise float s = (z[j] - zp) * invDelta(k);
                if (s > 0.0) {
                    precise float share = (a[j] * spow(s, pc.g.flow_exponent)) * inv_weights[j];
                    area = area + share;
                }
            }
        } else if (interior(p)) {
            // Every neighbour's area is loaded (independent loads, no branch); a neighbour that
            // does not drain here adds 0, which leaves the sum as it is.
            for (int k = 0; k < 8; k++) {
                int j = neighbourIndex(i, k);
                float aq = a[j];
                area = area + (int(r[j]) == (k + 4) % 8 ? aq : 0.0);
            }
        } else {
            for (int k = 0; k < 8; k++) {
                ivec2 q = p + OFFSETS[k];
                if (inRegion(q) && int(r[texelIndex(q)]) == (k + 4) % 8) {
                    area = area + a[texelIndex(q)];
                }
            }
        }
        a_out[i] = area;
        bool border = p.x == 0 || p.y == 0 || p.x == pc.g.size.x - 1 || p.y == pc.g.size.y - 1;
        bool outlet = border || (pc.g.has_base == 1 && zp <= pc.g.base_level);
        float zn = zp;
        if (!outlet) {
            int k = int(r[i]);
            float zq = 0.0;
            precise float s = 0.0;
            if (k != NO_RECEIVER) {
                zq = z[texelIndex(p + OFFSETS[k])];
                s = (zp - zq) * invDelta(k);
            }
            precise float sum = ((z[texelIndex(p + ivec2(1, 0))] + z[texelIndex(p - ivec2(1, 0))])
                                 + z[texelIndex(p + ivec2(0, 1))]) + z[texelIndex(p - ivec2(0, 1))];
            float up = 1.0;
            if (pc.g.uniform_uplift != 1) {
                up = u[i];
            }
            precise float zu;
            if (pc.g.stationary == 1) {
                precise float solved = stationary(zp, area, k, zq, sum, up);
                zu = zp + pc.g.relaxation * (solved - zp);
            } else {
                precise float e = 0.0;
                if (k != NO_RECEIVER) {
                    e = (pc.g.erodibility * spow(area, pc.g.m)) * spow(s, pc.g.n);
                }
                precise float lap = (sum - 4.0 * zp) / pc.g.tau2;
                precise float rate = e - pc.g.diffusion * lap;
                precise float zs = zp - pc.g.dt * rate;
                if (k != NO_RECEIVER) {
                    zs = max(zs, zq);
                }
                zu = zs + (pc.g.dt * pc.g.uplift) * up;
            }
            if (pc.g.critical == 1 && !isinf(zu) && !isnan(zu)) {
                // The threshold hillslope: at most each neighbour's height plus its rise (a texel
                // that is not an outlet is interior: every neighbour is in the region).
                for (int k = 0; k < 8; k++) {
                    precise float cap = z[neighbourIndex(i, k)] + ((k & 1) == 1 ? pc.g.rise_diag : pc.g.rise_axis);
                    zu = min(zu, cap);
                }
            }
            if (!isinf(zu) && !isnan(zu)) {
                zn = zu;
            }
            precise float d = abs(zn - zp) / pc.g.steady_unit;
            change = d;
        }
        z_out[i] = zn;
    }
    if (pc.g.measure == 1) {
        uint l = gl_LocalInvocationIndex;
        group_max[l] = change;
        barrier();
        for (uint s = GROUP / 2; s > 0; s >>= 1) {
            if (l < s) {
                group_max[l] = max(group_max[l], group_max[l + s]);
            }
            barrier();
        }
        if (l == 0 && group_max[0] > 0.0) {
            // Non-negative floats order as their bits do.
            atomicMax(steady_bits, floatBitsToUint(group_max[0]));
        }
    }
}

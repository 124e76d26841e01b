// Stream power, step 1: the receiver of every texel of R — the in-R neighbour with the steepest
// descent s_k = (z_p - z_q) / delta_k > 0 (computed as the drop times 1 / delta_k rounded on the
// host, as the twin does), the lowest k on equal slopes; NO_RECEIVER for a pit. With multi-flow
// routing, also 1 / the sum of s_k^flow_exponent over the lower in-R neighbours (0 for a pit),
// the weights' denominator. CPU twin: geology::cpu::receiver and flow_weights.
#include "geology_shared.glsl"

layout(set = 0, binding = 0, std430) readonly buffer Z { float z[]; };
layout(set = 0, binding = 1, std430) writeonly buffer R { RECEIVER r[]; };
layout(set = 0, binding = 2, std430) writeonly buffer W { float inv_weights[]; };

// Neighbour k, at slope s, becomes the receiver if it is steeper than every one before it (on
// equal slopes the lowest k stays).
void keepSteepest(float s, int k, inout float steepest, inout int best) {
    if (s > steepest) {
        steepest = s;
        best = k;
    }
}

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, pc.g.size))) {
        return;
    }
    int i = texelIndex(p);
    float zp = z[i];
    int best = NO_RECEIVER;
    float steepest = 0.0;
    if (interior(p)) {
        for (int k = 0; k < 8; k++) {
            precise float s = (zp - z[neighbourIndex(i, k)]) * invDelta(k);
            keepSteepest(s, k, steepest, best);
        }
    } else {
        for (int k = 0; k < 8; k++) {
            ivec2 q = p + OFFSETS[k];
            if (!inRegion(q)) {
                continue;
            }
            precise float s = (zp - z[texelIndex(q)]) * invDelta(k);
            keepSteepest(s, k, steepest, best);
        }
    }
    r[i] = RECEIVER(best);
    if (pc.g.multi_flow == 1) {
        precise float sum = 0.0;
        for (int k = 0; k < 8; k++) {
            ivec2 q = p + OFFSETS[k];
            if (!inRegion(q)) {
                continue;
            }
            precise float s = (zp - z[texelIndex(q)]) * invDelta(k);
            if (s > 0.0) {
                sum = sum + spow(s, pc.g.flow_exponent);
            }
        }
        inv_weights[i] = sum > 0.0 ? 1.0 / sum : 0.0;
    }
}

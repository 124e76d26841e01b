#version 460
// The same copy over storage buffers, four floats per invocation: how much of the image path's
// bandwidth is the image path's own.
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0, std430) readonly buffer Src { vec4 src[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Dst { vec4 dst[]; };

layout(push_constant) uniform Push {
    uint count; // vec4s
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256u;
    if (i < pc.count) {
        dst[i] = src[i];
    }
}

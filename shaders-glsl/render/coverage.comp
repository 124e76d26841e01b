#version 460
// Covered pixels: counts depth texels nearer than the far plane (reverse-Z: depth > 0). The LOD
// selection's triangle budget is a number of triangles per covered pixel.
layout(local_size_x = 16, local_size_y = 16) in;
layout(set = 0, binding = 0) uniform sampler2D depth_image;
layout(set = 0, binding = 1, std430) buffer Count { uint covered; };

shared uint group_count;

void main() {
    if (gl_LocalInvocationIndex == 0u) {
        group_count = 0u;
    }
    barrier();
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    ivec2 size = textureSize(depth_image, 0);
    if (p.x < size.x && p.y < size.y && texelFetch(depth_image, p, 0).r > 0.0) {
        atomicAdd(group_count, 1u);
    }
    barrier();
    if (gl_LocalInvocationIndex == 0u && group_count > 0u) {
        atomicAdd(covered, group_count);
    }
}

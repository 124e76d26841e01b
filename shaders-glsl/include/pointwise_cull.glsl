// Tile culling (TILE_CULL in include/pointwise_body.glsl), included in both kernels' main paths:
// marks the batch's instances whose circle reaches the workgroup's tile, texels tile_min..tile_max
// of the document (in scope there), then waits for the whole workgroup.
        for (uint i = gl_LocalInvocationIndex; i < pc.pass.instance_count; i += gl_WorkGroupSize.x * gl_WorkGroupSize.y) {
            BrushInstance b = instances[pc.pass.first_instance + i];
            vec2 nearest = clamp(b.center, tile_min, tile_max);
            sReaches[i] = length(nearest - b.center) < b.radius + 1.0;
        }
        barrier();

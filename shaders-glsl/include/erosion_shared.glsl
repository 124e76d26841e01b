// Erosion push constants (src/erosion/shared.rs, field for field; tests/shared_layout.rs) and the
// helpers every erosion kernel shares. The grid is the simulated region R, row-major, W x H;
// outside R is a wall. CPU twin: src/erosion/cpu.rs.
#ifndef SCARP_EROSION_SHARED_GLSL
#define SCARP_EROSION_SHARED_GLSL

struct ErosionPush {
    ivec2 size;          // W, H of the region
    float dt;
    float rain;
    float pipe_area;
    float gravity;
    float capacity;
    float dissolve;
    float deposit;
    float evaporation;
    float min_tilt;
    float erosion_depth;
    float talus_tan;     // tan(talus angle)
    float thermal_rate;
    // Brush runs weight rain and shedding by q = falloff(|p - center|) (region-local texels)
    // when radius > 0; region runs have q = 1.
    vec2 center;
    float radius;
    float inner_radius;
    int falloff;
    float falloff_power;
    // Brush instances on the GPU: texels per height unit and strength x pressure, and metres
    // per height unit (the wear and deposits the blend adds).
    float height_scale;
    float strength;
    float height_unit;
    float pad_;
};

#ifndef EROSION_NO_KERNEL
#include "brush.glsl"

layout(local_size_x = 16, local_size_y = 16, local_size_z = 1) in;
layout(push_constant) uniform Push { ErosionPush e; } pc;

int texelIndex(ivec2 p) {
    return p.y * pc.e.size.x + p.x;
}

// q at texel p (CPU twin: Params::weight).
float weightAt(ivec2 p) {
    if (pc.e.radius <= 0.0) {
        return 1.0;
    }
    precise float dx = float(p.x) - pc.e.center.x;
    precise float dy = float(p.y) - pc.e.center.y;
    precise float d = sqrt(dx * dx + dy * dy);
    return d < pc.e.radius
        ? brushFalloff(d, pc.e.radius, pc.e.inner_radius, pc.e.falloff, pc.e.falloff_power)
        : 0.0;
}
#endif

#endif

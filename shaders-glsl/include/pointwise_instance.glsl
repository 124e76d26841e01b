// The work of one instance on one texel, included in the loops of include/pointwise_body.glsl
// (textually, so the one-texel kernel compiles as it always has: through a function it ran raise
// 5 % slower at batch 16). In scope there: the instance b, the texel's position p and page-local
// `local`, its height h, the noise or stamp value m with have_m (the texel's noise is evaluated at
// most once: it does not depend on the instance), and changed.
        float d = length(p - b.center);
        if (d < b.radius) {
            float before = h;
            // Tested on the specialization constant first: through have_m alone (true for every
            // other brush) NVIDIA's compiler kept the noise code live in raise's kernel, and raise
            // ran 1.46x slower than level (docs/PERF.md, "Raise as fast as level").
            if (BRUSH_TYPE == BRUSH_NOISE && !have_m) {
                precise vec2 q = pc.pass.noise.offset + pc.pass.noise.scale * p;
                m = noiseAt(NOISE_KIND, pc.pass.noise, q);
                have_m = true;
            }
            if (BRUSH_TYPE == BRUSH_STAMP) {
                m = stampSample(stampPosition(p, b.center, b.axis, b.radius * pc.pass.brush_param));
            }
            if (BRUSH_TYPE == BRUSH_DIRECTIONAL) {
                // Each instance has its own input transform: no sharing between instances.
                vec2 t = directionalInput(p, b.center, b.axis, pc.pass.brush_param);
                precise vec2 q = pc.pass.noise.offset + pc.pass.noise.scale * t;
                m = noiseAt(NOISE_KIND, pc.pass.noise, q);
            }
            float w = b.strength * brushFalloff(d, b.radius, b.inner_radius, pc.pass.falloff, pc.pass.falloff_power);
#ifdef WEIGHTED
            w *= imageLoad(uWeight, local).r;
#endif
            if (BRUSH_TYPE == BRUSH_LEVEL) {
                h += clamp(w, 0.0, 1.0) * (pc.pass.level_target - h);
            } else if (BRUSH_TYPE == BRUSH_TERRACE) {
                // brush_param: the step height; level_target: the sharpness.
                float target = terraceTarget(h, pc.pass.brush_param, pc.pass.level_target);
                h += clamp(w, 0.0, 1.0) * (target - h);
            } else if (BRUSH_TYPE == BRUSH_PLANE) {
                // Flatten and ramp: the plane's height at the document's origin in level_target,
                // its gradient in the instance's axis (CPU twin: brush::Plane::at).
                precise float target = pc.pass.level_target + (p.x * b.axis.x + p.y * b.axis.y);
                h += clamp(w, 0.0, 1.0) * (target - h);
            } else {
                h += w * m;
            }
            h = quantizeHeight(h, pc.pass.height_min, pc.pass.height_range);
            // A result that is not finite (a brush overflowing f32) leaves the texel as it was:
            // the engine never stores NaN or Inf (CPU twin: brush/cpu.rs, the same rule).
            if (isnan(h) || isinf(h)) {
                h = before;
            }
            changed = true;
        }

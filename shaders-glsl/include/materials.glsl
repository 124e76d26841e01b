// The materials by rule (render::look::Materials; docs/maps.md): the weights of rock, scree,
// grass, sand and snow at a point, and the value noise that breaks their edges up. Shared by the
// viewport's look (render/shade.comp) and the exported weight maps (maps/weights.comp), so the
// exported weights are what the viewport shows. CPU twin: maps::materials. Needs nothing
// declared before it.
#ifndef SCARP_MATERIALS_GLSL
#define SCARP_MATERIALS_GLSL

float hash2(vec2 p) {
    p = fract(p * vec2(0.1031, 0.1030));
    p += dot(p, p.yx + 33.33);
    return fract((p.x + p.y) * p.x);
}

// Value noise in 0..1 with its gradient (xy: d/dx, d/dy; z: the value).
vec3 valueNoise(vec2 p) {
    vec2 i = floor(p);
    vec2 f = p - i;
    vec2 u = f * f * (3.0 - 2.0 * f);
    vec2 du = 6.0 * f * (1.0 - f);
    float a = hash2(i);
    float b = hash2(i + vec2(1.0, 0.0));
    float c = hash2(i + vec2(0.0, 1.0));
    float d = hash2(i + vec2(1.0, 1.0));
    float v = a + (b - a) * u.x + (c - a) * u.y + (a - b - c + d) * u.x * u.y;
    vec2 g = du * vec2(b - a + (a - b - c + d) * u.y, c - a + (a - b - c + d) * u.x);
    return vec3(g, v);
}

// Material weights, each 0..1 and summing to 1: rock, scree, grass, sand, snow. `deg`: the
// ground's slope (degrees), `alt`: altitude (0..1 of the rules' range), `curv`: curvature (world
// units per texel², concave above 0), `xz`: the point (texels). `rules0`: grass slope, rock slope,
// snow line, sand line; `rules1`: snow slope, softness, breakup, scree curvature.
void materialWeights(float deg, float alt, float curv, vec2 xz, vec4 rules0, vec4 rules1,
                     out float w[5]) {
    float soft = max(rules1.y, 0.01);
    float jitter = (valueNoise(xz * 0.02).z - 0.5) * 2.0 * rules1.z;
    float s = deg + jitter * soft * 1.5;
    float a = alt + jitter * 0.04;
    float rock = smoothstep(rules0.y - soft, rules0.y + soft, s);
    float scree = smoothstep(rules0.x - soft, rules0.x + soft, s) * (1.0 - rock);
    // Steep concave ground (gullies below cliffs) collects scree.
    float steep = smoothstep(rules0.x - soft, rules0.x, s);
    float gully = steep * smoothstep(rules1.w, 2.0 * rules1.w + 1e-4, curv);
    scree += gully * rock;
    rock *= 1.0 - gully;
    float flat_ = max(1.0 - rock - scree, 0.0);
    float sand = flat_ * (1.0 - smoothstep(rules0.w - 0.02, rules0.w + 0.02, a));
    float grass = flat_ - sand;
    float snow = smoothstep(rules0.z - 0.03, rules0.z + 0.03, a + jitter * 0.03)
               * (1.0 - smoothstep(rules1.x - soft, rules1.x + soft, s));
    float under = 1.0 - snow;
    w[0] = rock * under;
    w[1] = scree * under;
    w[2] = grass * under;
    w[3] = sand * under;
    w[4] = snow;
}

#endif

#version 460
// Terrain shading: slope/height colours, a directional light (shadowed and occluded by the
// lighting field with VIEW_LIGHTING), distance fog, the brush cursor
// ring and the LOD-colour debug view. Writes gamma-encoded colour to a UNORM target.
#extension GL_GOOGLE_include_directive : require
#include "render_shared.glsl"
#include "lighting_shared.glsl"

layout(set = 0, binding = 0, std140) uniform Frame { FrameData frame; };
#include "look.glsl"

layout(location = 0) in vec3 in_world;
layout(location = 1) in vec3 in_normal;
layout(location = 2) flat in uint in_level;
layout(location = 3) in float in_overlay;
// Sun visibility and ambient occlusion (render::lighting; 1, 1 when unlit).
layout(location = 4) flat in ivec2 in_block;
layout(location = 5) in float in_curvature;

// The lighting field (render::lighting, packed): the bound block's pages (binding 2 of the page
// set; pages without an image are bound to a page-sized placeholder holding the flat value) and
// the field's coarse level (its first value per block: the lighting at the block's corner).
layout(set = 1, binding = 2, r32f) uniform readonly image2D light_pages[OVERLAY_SLOTS];
layout(set = 0, binding = 3, rgba32f) uniform readonly image2D light_coarse;

#define LSLOT(i) case i: return imageLoad(light_pages[i], p).r;

float loadLight(int slot, ivec2 p) {
    switch (slot) {
    LSLOT(0) LSLOT(1) LSLOT(2) LSLOT(3) LSLOT(4) LSLOT(5) LSLOT(6) LSLOT(7) LSLOT(8) LSLOT(9)
    LSLOT(10) LSLOT(11) LSLOT(12) LSLOT(13) LSLOT(14)
    default: return imageLoad(light_pages[15], p).r;
    }
}

// Sun visibility and occlusion at texel g of the bound block (clamped into it and the
// document).
vec2 blockLight(ivec2 g) {
    int size = frame.doc.z;
    g = clamp(g, ivec2(0), frame.doc.xy - 1);
    ivec2 rel = clamp(g - in_block, ivec2(0), ivec2(PAGE_BLOCK * size - 1));
    ivec2 d = rel / size;
    return unpackLight(loadLight(d.y * PAGE_BLOCK + d.x, rel - d * size));
}

// Sun visibility and occlusion at world position xz: bilinear over the field's texels within
// page nodes, over its block corners on coarse nodes.
vec2 lightAt(vec2 xz) {
    if (in_block.x < 0) {
        vec2 c = xz / float(COARSE_FACTOR);
        ivec2 i = ivec2(floor(c));
        vec2 f = c - vec2(i);
        ivec2 top = imageSize(light_coarse) - 1;
        vec2 a = unpackLight(imageLoad(light_coarse, clamp(i, ivec2(0), top)).a);
        vec2 b = unpackLight(imageLoad(light_coarse, clamp(i + ivec2(1, 0), ivec2(0), top)).a);
        vec2 e = unpackLight(imageLoad(light_coarse, clamp(i + ivec2(0, 1), ivec2(0), top)).a);
        vec2 g = unpackLight(imageLoad(light_coarse, clamp(i + ivec2(1, 1), ivec2(0), top)).a);
        return mix(mix(a, b, f.x), mix(e, g, f.x), f.y);
    }
    ivec2 i = ivec2(floor(xz));
    vec2 f = xz - vec2(i);
    vec2 a = blockLight(i);
    vec2 b = blockLight(i + ivec2(1, 0));
    vec2 e = blockLight(i + ivec2(0, 1));
    vec2 g = blockLight(i + ivec2(1, 1));
    return mix(mix(a, b, f.x), mix(e, g, f.x), f.y);
}
layout(location = 0) out vec4 out_color;

const vec3 LOD_COLOURS[8] = vec3[8](
    vec3(0.90, 0.20, 0.20), vec3(0.95, 0.60, 0.15), vec3(0.90, 0.90, 0.20),
    vec3(0.30, 0.85, 0.30), vec3(0.20, 0.70, 0.90), vec3(0.35, 0.35, 0.95),
    vec3(0.75, 0.35, 0.90), vec3(0.55, 0.55, 0.55));

float ring(float d, float r) {
    float w = max(fwidth(d) * 1.5, 1e-3);
    return 1.0 - smoothstep(0.0, w, abs(d - r));
}

// The slope heat map (degrees): green to yellow up to the walkable slope, orange to red to
// purple above it. CPU twin: render::analysis::slope_colour.
vec3 slopeColour(float deg, float walkable) {
    if (deg <= walkable) {
        float t = clamp(deg / max(walkable, 1e-3), 0.0, 1.0);
        return mix(vec3(0.10, 0.55, 0.20), vec3(0.95, 0.90, 0.20), t);
    }
    float t = clamp((deg - walkable) / max(90.0 - walkable, 1e-3), 0.0, 1.0);
    return t < 0.5 ? mix(vec3(0.95, 0.45, 0.10), vec3(0.85, 0.10, 0.10), 2.0 * t)
                   : mix(vec3(0.85, 0.10, 0.10), vec3(0.45, 0.10, 0.60), 2.0 * t - 1.0);
}

// The material colour by the rules (render::look) at slope `deg`, altitude `alt` (0..1 of the
// range) and curvature `curv`; `rough` gets how much rock and scree it holds (detail normals).
vec3 materialAt(float deg, float alt, float curv, vec2 xz, out float rough) {
    float soft = max(frame.rules1.y, 0.01);
    float jitter = (valueNoise(xz * 0.02).z - 0.5) * 2.0 * frame.rules1.z;
    float s = deg + jitter * soft * 1.5;
    float a = alt + jitter * 0.04;
    float rock = smoothstep(frame.rules0.y - soft, frame.rules0.y + soft, s);
    float scree = smoothstep(frame.rules0.x - soft, frame.rules0.x + soft, s) * (1.0 - rock);
    // Steep concave ground (gullies below cliffs) collects scree.
    float steep = smoothstep(frame.rules0.x - soft, frame.rules0.x, s);
    float gully = steep * smoothstep(frame.rules1.w, 2.0 * frame.rules1.w + 1e-4, curv);
    scree += gully * rock;
    rock *= 1.0 - gully;
    float flat_ = max(1.0 - rock - scree, 0.0);
    float sand = flat_ * (1.0 - smoothstep(frame.rules0.w - 0.02, frame.rules0.w + 0.02, a));
    float grass = flat_ - sand;
    vec3 c = frame.rock.rgb * rock + frame.scree.rgb * scree + frame.grass.rgb * grass
           + frame.sand.rgb * sand;
    c *= 0.8 + 0.4 * valueNoise(xz * 0.13).z;
    float snow = smoothstep(frame.rules0.z - 0.03, frame.rules0.z + 0.03, a + jitter * 0.03)
               * (1.0 - smoothstep(frame.rules1.x - soft, frame.rules1.x + soft, s));
    rough = (rock + scree) * (1.0 - snow);
    return mix(c, frame.snow.rgb, snow);
}

// The look's shading (linear): materials, detail normals, sun (shadowed) and sky (occluded)
// light, haze that takes the sky's colour.
vec3 lookShade(vec3 n, float alt, vec2 light) {
    vec2 xz = in_world.xz;
    float deg = degrees(acos(clamp(n.y, 0.0, 1.0)));
    float rough;
    vec3 albedo = materialAt(deg, alt, in_curvature, xz, rough);
    // Detail normals from two octaves of value noise, faded out where a pixel spans texels.
    float fade = 1.0 - smoothstep(0.5, 3.0, length(fwidth(xz)));
    vec3 d1 = valueNoise(xz * 0.45);
    vec3 d2 = valueNoise(xz * 1.7);
    vec2 g = d1.xy * 0.45 + d2.xy * 1.7 * 0.35;
    float k = frame.look.z * fade * (0.15 + 0.6 * rough);
    vec3 nd = normalize(n + k * vec3(-g.x, 0.0, -g.y));
    vec3 l = normalize(frame.light.xyz);
    vec3 sun = mix(vec3(1.0, 0.62, 0.38), vec3(1.0, 0.95, 0.88), smoothstep(0.0, 0.45, l.y))
             * frame.look.y;
    vec3 sky = skyColour(normalize(vec3(0.0, 1.0, 0.0) + 0.3 * l), l);
    vec3 c = albedo * (sun * max(dot(nd, l), 0.0) * light.x
                       + sky * light.y * (0.55 + 0.45 * nd.y));
    vec3 view = in_world - frame.eye.xyz;
    float haze = 1.0 - exp(-frame.shade.x * length(view));
    return mix(c, skyColour(normalize(view), l), clamp(haze, 0.0, 1.0));
}

void main() {
    vec3 n = normalize(in_normal);
    uint flags = uint(frame.doc.w);
    float vs = frame.eye.w;
    float lo = frame.shade.y * vs;
    float hi = frame.shade.z * vs;
    float t = clamp((in_world.y - lo) / max(hi - lo, 1e-6), 0.0, 1.0);
    float slope = 1.0 - n.y;
    vec3 low = vec3(0.23, 0.36, 0.16);
    vec3 mid = vec3(0.45, 0.40, 0.30);
    vec3 high = vec3(0.92, 0.93, 0.95);
    vec3 rock = vec3(0.42, 0.39, 0.36);
    vec3 albedo = mix(mix(low, mid, smoothstep(0.15, 0.6, t)), high, smoothstep(0.75, 0.92, t));
    albedo = mix(albedo, rock, smoothstep(0.25, 0.55, slope));
    if ((flags & VIEW_LOD_COLOURS) != 0u) {
        // Levels 7 and up (coarse, far) alternate two greys.
        albedo = in_level < 7u ? LOD_COLOURS[in_level]
                               : LOD_COLOURS[7] * (in_level % 2u == 0u ? 0.8 : 1.2);
    }
    vec3 l = normalize(frame.light.xyz);
    // Ambient (occluded by the horizons around) plus the sun (where it is not shadowed).
    vec2 light = (flags & VIEW_LIGHTING) != 0u ? lightAt(in_world.xz) : vec2(1.0);
    bool look = (flags & VIEW_LOOK) != 0u && (flags & VIEW_LOD_COLOURS) == 0u;
    vec3 c;
    if (look) {
        c = lookShade(n, t, light);
    } else {
        c = albedo * (frame.light.w * light.y
                      + (1.0 - frame.light.w) * max(dot(n, l), 0.0) * light.x);
        float dist = length(in_world - frame.eye.xyz);
        float fog = 1.0 - exp(-frame.shade.x * dist);
        c = mix(c, vec3(0.62, 0.70, 0.80), clamp(fog, 0.0, 1.0));
    }
    if ((flags & VIEW_OVERLAY_WATER) != 0u) {
        // Water over the terrain: blue by its depth (0: none, 1: deep).
        c = mix(c, vec3(0.08, 0.30, 0.85), 0.8 * clamp(in_overlay, 0.0, 1.0));
    } else if ((flags & VIEW_OVERLAY) != 0u) {
        // Where the overlay (a layer's mask) hides, a magenta tint: half at 0, none at 1.
        c = mix(c, vec3(0.85, 0.12, 0.55), 0.5 * (1.0 - clamp(in_overlay, 0.0, 1.0)));
    }
    if ((flags & VIEW_SLOPE) != 0u) {
        // Unlit, so the colour reads the angle of the terrain as drawn (vertical scale applied).
        float deg = degrees(acos(clamp(n.y, 0.0, 1.0)));
        c = slopeColour(deg, frame.analysis.x);
        // The heat map's colours as they are: not tone-mapped.
        look = false;
    }
    if ((flags & VIEW_CONTOURS) != 0u) {
        float h = in_world.y / max(vs, 1e-6) / max(frame.analysis.y, 1e-9);
        float f = fract(h);
        float w = max(fwidth(h) * 1.2, 1e-4);
        // Flat ground lying exactly on a level (fwidth 0) is not a line.
        float line = (1.0 - smoothstep(0.0, w, min(f, 1.0 - f))) * smoothstep(1e-4, 1e-3, fwidth(h));
        c = mix(c, vec3(0.05, 0.05, 0.08), 0.85 * line);
    }
    if ((flags & VIEW_CURSOR) != 0u) {
        float d = length(in_world.xz - frame.cursor.xy);
        float a = max(ring(d, frame.cursor.z), 0.6 * ring(d, frame.cursor.w));
        c = mix(c, vec3(1.0, 0.85, 0.2), a);
    }
    if ((flags & VIEW_WIREFRAME) != 0u) {
        c = vec3(0.05, 0.05, 0.05) + 0.5 * c;
    }
    out_color = vec4(look ? present(c) : pow(c, vec3(1.0 / 2.2)), 1.0);
}

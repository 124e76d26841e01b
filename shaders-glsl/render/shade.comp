#version 460
// Shading, deferred: one invocation per pixel turns the terrain's G-buffer (render/terrain.frag)
// and depth into the encoded colour the target shows. Plain colours or the look (materials,
// sky, haze, tone map), the lighting field (sun visibility and occlusion, read from the light
// atlas the renderer keeps of the pages drawn at page level, or from the far level),
// the overlays (mask or water tint, material weights, curvature and slope maps, contours), the
// brush cursor, LOD colours and wireframe, then the rivers' water (read like the lighting, from
// its own atlas and coarse level) and the sea over it all. Screen-space derivatives come from the neighbouring
// pixels' depths.
#extension GL_GOOGLE_include_directive : require
#include "render_shared.glsl"
#include "lighting_shared.glsl"

layout(local_size_x = SHADE_GROUP, local_size_y = SHADE_GROUP) in;

layout(set = 0, binding = 0, std140) readonly buffer Frame { FrameData frame; };
#include "look.glsl"
layout(set = 0, binding = 1) uniform sampler2D depth_image;
// x, z of the normal, curvature, overlay value (terrain.frag); page nodes of r32f documents
// take their normal and curvature from the heights atlas instead (surfaceAt), and page nodes
// their overlay from the overlay atlas (overlayAt).
layout(set = 0, binding = 2) uniform sampler2D surface_image;
// The node: level | GBUF_COARSE.
layout(set = 0, binding = 3) uniform usampler2D node_image;
// Lighting pages drawn at page level, side by side (light_cols of them a row), and per page of
// the document its slot there (or ATLAS_FLAT: not lit at full resolution, ATLAS_COARSE: not in
// the atlas; both read the coarse level: a lit page's corners, the far level elsewhere).
layout(set = 0, binding = 4, r32f) uniform readonly image2D light_atlas;
layout(set = 0, binding = 5, std430) readonly buffer LightTable { int light_table[]; };
// The lighting field's coarse level: the far level, lit from the heights' coarse level
// (render/lighting_far.comp: the lighting at each block's corner of the surface coarse nodes
// draw).
layout(set = 0, binding = 6, rgba32f) uniform readonly image2D light_coarse;
layout(set = 0, binding = 7, rgba8) uniform writeonly image2D out_image;
// The rivers' water surfaces (height units; far below any ground where none) as the lighting:
// an atlas of the pages drawn at page level, its table (ATLAS_FLAT: no water), the coarse level.
layout(set = 0, binding = 8, r32f) uniform readonly image2D rivers_atlas;
layout(set = 0, binding = 9, std430) readonly buffer RiversTable { int rivers_table[]; };
layout(set = 0, binding = 10, rgba32f) uniform readonly image2D rivers_coarse;
// The heights of the pages drawn at page level (r32f documents; pc.heights_cols is 0 for
// others), as the lighting: an atlas and its table (ATLAS_FLAT: the flat height; ATLAS_COARSE:
// not in the atlas, where the G-buffer's normals stand).
layout(set = 0, binding = 11, r32f) uniform readonly image2D heights_atlas;
layout(set = 0, binding = 12, std430) readonly buffer HeightsTable { int heights_table[]; };
// The overlay field tinting the terrain (pc.overlay_cols is 0 without one) the same way
// (ATLAS_FLAT: its flat value, frame.heights.w; ATLAS_COARSE: the G-buffer's overlay).
layout(set = 0, binding = 13, r32f) uniform readonly image2D overlay_atlas;
layout(set = 0, binding = 14, std430) readonly buffer OverlayTable { int overlay_table[]; };
// The heights atlas's mip levels 1 to pc.mip_levels (render/terrain/atlas_mips.rs): per
// slot a page_size x page_size/2 area, level k at x = page_size - 2 * (page_size >> k).
layout(set = 0, binding = 15, r32f) uniform readonly image2D heights_mips;
// The light atlas's mip levels 1 to pc.mip_levels the same way (packed as its texels).
layout(set = 0, binding = 16, r32f) uniform readonly image2D light_mips;
layout(push_constant) uniform Push { ShadePush pc; };
// Whether the rivers and the sea are drawn at all (the frame's flags still say whether they
// show): the kernel without them compiles in less than half the time, and most frames show
// none (render/terrain/deferred.rs, ShadeKernels).
layout(constant_id = 0) const bool WATER = true;

const vec3 LOD_COLOURS[8] = vec3[8](
    vec3(0.90, 0.20, 0.20), vec3(0.95, 0.60, 0.15), vec3(0.90, 0.90, 0.20),
    vec3(0.30, 0.85, 0.30), vec3(0.20, 0.70, 0.90), vec3(0.35, 0.35, 0.95),
    vec3(0.75, 0.35, 0.90), vec3(0.55, 0.55, 0.55));
// The plain sky and haze colour (linear; render::terrain::SKY).
const vec3 PLAIN_SKY = vec3(0.62, 0.70, 0.80);
// The rivers field where no water stands (crate::rivers::NO_WATER; build.rs shares integers
// only). Flat pages of the rivers' atlas read it; anything under the ground would do.
const float NO_WATER = -1.0e30;

// World position of pixel p at depth d (reverse-Z, d > 0).
vec3 worldAt(ivec2 p, float d) {
    vec2 ndc = (vec2(p) + 0.5) / vec2(pc.size) * 2.0 - 1.0;
    vec4 w = frame.inv_view_proj * vec4(ndc, d, 1.0);
    return w.xyz / w.w;
}

float depthAt(ivec2 p) {
    if (any(lessThan(p, ivec2(0))) || any(greaterThanEqual(p, pc.size))) {
        return 0.0;
    }
    return texelFetch(depth_image, p, 0).r;
}

// How the world position changes one pixel along `axis`: toward the neighbour whose depth is
// closer to this pixel's (the same surface, where the other side is an edge or the sky); zero
// where both neighbours show the sky. What fwidth's differences are in a fragment shader.
vec3 pixelStep(ivec2 p, ivec2 axis, float d, vec3 world) {
    float a = depthAt(p + axis);
    float b = depthAt(p - axis);
    bool use_a = a > 0.0 && (b <= 0.0 || abs(a - d) <= abs(b - d));
    if (use_a) {
        return worldAt(p + axis, a) - world;
    }
    if (b > 0.0) {
        return world - worldAt(p - axis, b);
    }
    return vec3(0.0);
}

// log2 of the document's page size (a power of two: DocumentDesc checks it). The atlas
// lookups below find a texel's page and slot with shifts and masks: no integer division,
// which GPUs (and lavapipe's CPU lanes) run as long sequences.
int pageShift() {
    return findMSB(frame.doc.z);
}

// Where texel t of slot `slot` lies in an atlas of `cols` slots a row (a power of two:
// PageAtlas keeps it so), slots `size` texels apart.
ivec2 slotTexel(int slot, int cols, ivec2 size, ivec2 t) {
    return ivec2(slot & (cols - 1), slot >> findMSB(cols)) * size + t;
}

// Where texel t of a page's level (pages `1 << shift` texels a side there) lies in the mips
// image of an atlas of `cols` slots a row (the layout at heights_mips's binding).
ivec2 mipSlotTexel(int slot, int cols, int shift, ivec2 t) {
    return slotTexel(slot, cols, ivec2(frame.doc.z, frame.doc.z / 2),
                     ivec2(frame.doc.z - (2 << shift), 0) + t);
}

// The far level's lighting of block corners, bilinear at texel position xz.
vec2 coarseLight(vec2 xz) {
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

// Sun visibility and occlusion at texel g (clamped into the document).
vec2 lightTexel(ivec2 g) {
    g = clamp(g, ivec2(0), frame.doc.xy - 1);
    int shift = pageShift();
    ivec2 page = g >> shift;
    int slot = light_table[page.y * pc.pages_x + page.x];
    if (slot >= 0) {
        ivec2 at = slotTexel(slot, pc.light_cols, ivec2(frame.doc.z), g - (page << shift));
        return unpackLight(imageLoad(light_atlas, at).r);
    }
    // A page with no lighting (flat: not lit at full resolution) is shaded from the far level,
    // as one the atlas had no room for.
    return coarseLight(vec2(g));
}

// Sun visibility and occlusion of mip texel j of level k (1 and up; clamped to the level's
// whole texels inside the document): the mean of the 2^k x 2^k texels it spans.
vec2 lightMipTexel(int k, ivec2 j) {
    int shift = pageShift() - k;
    j = clamp(j, ivec2(0), max((frame.doc.xy >> k) - 1, ivec2(0)));
    ivec2 page = j >> shift;
    int slot = light_table[page.y * pc.pages_x + page.x];
    if (slot >= 0) {
        ivec2 at = mipSlotTexel(slot, pc.light_cols, shift, j - (page << shift));
        return unpackLight(imageLoad(light_mips, at).r);
    }
    return coarseLight((vec2(j) + 0.5) * float(1 << k) - 0.5);
}

// Sun visibility and occlusion at world position xz from level k (0: the texels themselves;
// `mips` is k > 0, a constant where the caller knows it, so the level-0 look-ups drop out of its
// code), bilinear between the four texels of the level around xz.
vec2 lightLevel(int k, bool mips, vec2 xz) {
    vec2 p = mips ? (xz + 0.5) / float(1 << k) - 0.5 : xz;
    ivec2 i = ivec2(floor(p));
    vec2 f = p - vec2(i);
    if (!mips) {
        vec2 a = lightTexel(i);
        vec2 b = lightTexel(i + ivec2(1, 0));
        vec2 e = lightTexel(i + ivec2(0, 1));
        vec2 g = lightTexel(i + ivec2(1, 1));
        return mix(mix(a, b, f.x), mix(e, g, f.x), f.y);
    }
    vec2 a = lightMipTexel(k, i);
    vec2 b = lightMipTexel(k, i + ivec2(1, 0));
    vec2 e = lightMipTexel(k, i + ivec2(0, 1));
    vec2 g = lightMipTexel(k, i + ivec2(1, 1));
    return mix(mix(a, b, f.x), mix(e, g, f.x), f.y);
}

// Sun visibility and occlusion at world position xz, a pixel spanning `footprint` texels: on
// page nodes from mip level log2(footprint) (up to pc.mip_levels), trilinear between the two
// levels around it, so a pixel shows the mean of the texels it spans (bilinear over the texels
// where it spans one or less); on coarse nodes bilinear over the far level's block corners.
vec2 lightAt(vec2 xz, bool coarse, float footprint) {
    if (coarse) {
        return coarseLight(xz);
    }
    float lod = clamp(log2(max(footprint, 1e-6)), 0.0, float(pc.mip_levels));
    int k = int(floor(lod));
    float t = lod - float(k);
    vec2 light = lightLevel(k, k > 0, xz);
    return t > 0.0 ? mix(light, lightLevel(k + 1, true, xz), t) : light;
}

// The height (height units) at texel g (clamped into the document) in `h`; false where its page
// is not in the heights atlas.
bool heightTexel(ivec2 g, out float h) {
    g = clamp(g, ivec2(0), frame.doc.xy - 1);
    int shift = pageShift();
    ivec2 page = g >> shift;
    int slot = heights_table[page.y * pc.pages_x + page.x];
    if (slot >= 0) {
        ivec2 at = slotTexel(slot, pc.heights_cols, ivec2(frame.doc.z), g - (page << shift));
        h = imageLoad(heights_atlas, at).r;
        return true;
    }
    h = frame.heights.x;
    return slot == ATLAS_FLAT;
}

// The overlay's value at texel g (clamped into the document) in `o`; false where its page is
// not in the overlay atlas.
bool overlayTexel(ivec2 g, out float o) {
    g = clamp(g, ivec2(0), frame.doc.xy - 1);
    int shift = pageShift();
    ivec2 page = g >> shift;
    int slot = overlay_table[page.y * pc.pages_x + page.x];
    if (slot >= 0) {
        ivec2 at = slotTexel(slot, pc.overlay_cols, ivec2(frame.doc.z), g - (page << shift));
        o = imageLoad(overlay_atlas, at).r;
        return true;
    }
    o = frame.heights.w;
    return slot == ATLAS_FLAT;
}

// The overlay's value at world position xz, bilinear between the four texels around it (what
// the vertex stage reads at a texel, per pixel whatever the mesh's level), snapped to 1/4096 as
// terrain.frag snaps it; false where a texel's page is not in the overlay atlas.
bool overlayAt(vec2 xz, out float value) {
    vec2 p = clamp(xz, vec2(0.0), vec2(frame.doc.xy - 1));
    ivec2 i = ivec2(floor(p));
    vec2 f = p - vec2(i);
    float a, b, c, d;
    bool ok = overlayTexel(i, a);
    ok = overlayTexel(i + ivec2(1, 0), b) && ok;
    ok = overlayTexel(i + ivec2(0, 1), c) && ok;
    ok = overlayTexel(i + ivec2(1, 1), d) && ok;
    value = round(mix(mix(a, b, f.x), mix(c, d, f.x), f.y) * 4096.0) / 4096.0;
    return ok;
}

// The mean height (height units) of the 2^k x 2^k texels of mip texel j of level k (1 and
// up; clamped to the level's whole texels inside the document) in `h`; false where its page is
// not in the heights atlas.
bool heightMipTexel(int k, ivec2 j, out float h) {
    int shift = pageShift() - k;
    j = clamp(j, ivec2(0), max((frame.doc.xy >> k) - 1, ivec2(0)));
    ivec2 page = j >> shift;
    int slot = heights_table[page.y * pc.pages_x + page.x];
    if (slot >= 0) {
        ivec2 at = mipSlotTexel(slot, pc.heights_cols, shift, j - (page << shift));
        h = imageLoad(heights_mips, at).r;
        return true;
    }
    h = frame.heights.x;
    return slot == ATLAS_FLAT;
}

// The twelve of a 4 x 4 block's texels (row-major) that are not its corners.
const int CROSS[12] = int[12](1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14);

// The heights' gradient (x, z: height units per texel, twice the central difference's) and
// Laplacian (per texel²) at world position xz from mip level k (0: the texels themselves; `mips`
// is k > 0, as lightLevel's).
// The terrain's vertex stage takes central differences and the Laplacian at a texel
// (include/terrain_vert_body.glsl); here they are taken at the four texels of level k around xz
// (spaced 2^k apart) and interpolated bilinearly. False where one of the twelve texels read lies
// in a page not in the heights atlas.
bool surfaceLevel(int k, bool mips, vec2 xz, out vec3 d) {
    // Level 0's texel i lies at i; level k's texel j at the centre of the texels it means,
    // (j + 0.5) * 2^k - 0.5.
    float s = float(1 << k);
    vec2 top = vec2(mips ? max((frame.doc.xy >> k) - 1, ivec2(0)) : frame.doc.xy - 1);
    vec2 p = clamp(mips ? (xz + 0.5) / s - 0.5 : xz, vec2(0.0), top);
    ivec2 i0 = ivec2(floor(p));
    vec2 f = p - vec2(i0);
    // h[(y + 1) * 4 + x + 1]: the height at i0 + (x, y), x and y in -1..2; the corners are
    // neither read nor used (CROSS lists the twelve others). The level's image is chosen once,
    // outside the loops: chosen per texel inside them, the pass measured 1.07x slower on an
    // H200 and 1.2-1.4x on lavapipe (docs/PERF.md).
    float h[16];
    bool ok = true;
    if (!mips) {
        for (int n = 0; n < 12; n++) {
            int i = CROSS[n];
            ok = heightTexel(i0 + ivec2(i & 3, i >> 2) - 1, h[i]) && ok;
        }
    } else {
        for (int n = 0; n < 12; n++) {
            int i = CROSS[n];
            ok = heightMipTexel(k, i0 + ivec2(i & 3, i >> 2) - 1, h[i]) && ok;
        }
    }
    d = vec3(0.0);
    if (!ok) {
        return false;
    }
    vec3 c[4];
    for (int q = 0; q < 4; q++) {
        int i = ((q >> 1) + 1) * 4 + (q & 1) + 1;
        float e = h[i + 1], w = h[i - 1], no = h[i - 4], so = h[i + 4];
        c[q] = vec3(e - w, so - no, e + w + no + so - 4.0 * h[i]);
    }
    d = mix(mix(c[0], c[1], f.x), mix(c[2], c[3], f.x), f.y) / vec3(s, s, s * s);
    return true;
}

// The drawn normal and the curvature at world position xz, per pixel from the heights, a pixel
// spanning `footprint` texels: from mip level log2(footprint) (up to pc.mip_levels),
// trilinear between the two levels around it, so a pixel shows the mean of the texels it spans
// rather than some of them (level 0 where a pixel spans a texel or less). False where the
// heights are not in the atlas (the G-buffer's normals then).
bool surfaceAt(vec2 xz, float footprint, out vec3 n, out float curvature) {
    float lod = clamp(log2(max(footprint, 1e-6)), 0.0, float(pc.mip_levels));
    int k = int(floor(lod));
    float t = lod - float(k);
    vec3 d;
    n = vec3(0.0, 1.0, 0.0);
    curvature = 0.0;
    if (!surfaceLevel(k, k > 0, xz, d)) {
        return false;
    }
    vec3 d1;
    // Where the level above reaches a page not in the atlas, this level alone.
    if (t > 0.0 && surfaceLevel(k + 1, true, xz, d1)) {
        d = mix(d, d1, t);
    }
    float vs = frame.eye.w;
    n = normalize(vec3(-0.5 * d.x * vs, 1.0, -0.5 * d.y * vs));
    curvature = d.z * vs;
    return true;
}

// The rivers' water surface (height units) at texel g (clamped into the document).
float riverTexel(ivec2 g) {
    g = clamp(g, ivec2(0), frame.doc.xy - 1);
    int shift = pageShift();
    ivec2 page = g >> shift;
    int slot = rivers_table[page.y * pc.pages_x + page.x];
    if (slot >= 0) {
        ivec2 at = slotTexel(slot, pc.rivers_cols, ivec2(frame.doc.z), g - (page << shift));
        return imageLoad(rivers_atlas, at).r;
    }
    if (slot == ATLAS_FLAT) {
        return NO_WATER;
    }
    ivec2 c = clamp(g / COARSE_FACTOR, ivec2(0), imageSize(rivers_coarse) - 1);
    return imageLoad(rivers_coarse, c).a;
}

// The rivers' water surface at world position xz: bilinear over the field's texels on page
// nodes, over its block corners on coarse nodes.
float riverAt(vec2 xz, bool coarse) {
    float step = coarse ? float(COARSE_FACTOR) : 1.0;
    vec2 c = xz / step;
    ivec2 i = ivec2(floor(c));
    vec2 f = c - vec2(i);
    int s = int(step);
    float a = riverTexel(i * s);
    float b = riverTexel((i + ivec2(1, 0)) * s);
    float e = riverTexel((i + ivec2(0, 1)) * s);
    float g = riverTexel((i + ivec2(1, 1)) * s);
    return mix(mix(a, b, f.x), mix(e, g, f.x), f.y);
}

float ring(float d, float fw, float r) {
    float w = max(fw * 1.5, 1e-3);
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

// Rock's tone at altitude `alt` (0..1 of the rules' range) and point `xz` on ground sloping
// down along `down` (unit, xz): strata (48 bands over the range, each its own brightness, their
// boundaries waved a little), crossed by runnels running down the slope. Anchored to altitude,
// so the bands stay level while the ground is sculpted through them. The runnels are streaks
// along x and along z blended by the slope's direction (not noise turned with it: turned about
// the origin, a small change of direction far from it would shift the noise by many cells).
float rockTone(float alt, vec2 xz, vec2 down) {
    float wave = valueNoise(xz * 0.011).z - 0.5;
    float band = valueNoise(vec2(alt * 48.0 + 0.8 * wave, 3.7)).z;
    float fine = valueNoise(vec2(alt * 190.0 + 2.0 * wave, 9.1)).z;
    float along_x = valueNoise(vec2(xz.x * 0.025, xz.y * 0.35)).z;
    float along_z = valueNoise(vec2(xz.x * 0.35, xz.y * 0.025) + vec2(31.0)).z;
    float runnel = mix(along_z, along_x, down.x * down.x);
    return (0.62 + 0.5 * band + 0.12 * fine) * (0.8 + 0.35 * runnel);
}

// The material colour by the rules (render::look; materials.glsl) at slope `deg`, altitude
// `alt` (0..1 of the range) and curvature `curv` on ground sloping down along `down`; `rough`
// gets how much rock and scree it holds (detail normals).
vec3 materialAt(float deg, float alt, float curv, vec2 xz, vec2 down, out float rough) {
    float w[5];
    materialWeights(deg, alt, curv, xz, frame.rules0, frame.rules1, w);
    vec3 c = frame.scree.rgb * w[1] + frame.grass.rgb * w[2] + frame.sand.rgb * w[3];
    c *= 0.85 + 0.3 * valueNoise(xz * 0.13).z;
    c += frame.rock.rgb * w[0] * rockTone(alt, xz, down);
    rough = w[0] + w[1];
    return c + frame.snow.rgb * w[4];
}

// The sky's light on the ground around sun direction `l`: the sky's brightness, only a little
// of its blue. A sky's irradiance is far less saturated than its zenith; saturated blue shade
// read as lakes and turned snow in shadow blue (issue 36, item 8).
vec3 skyLight(vec3 l) {
    vec3 s = skyColour(normalize(vec3(0.0, 1.0, 0.0) + 0.3 * l), l);
    float y = dot(s, vec3(0.2126, 0.7152, 0.0722));
    return mix(vec3(y), s, 0.3);
}

// The sun's light (linear) toward `l`: warmer near the horizon, at the look's intensity.
vec3 sunColour(vec3 l) {
    return mix(vec3(1.0, 0.62, 0.38), vec3(1.0, 0.95, 0.88), smoothstep(0.0, 0.45, l.y))
         * frame.look.y;
}

// The ground's slope in degrees under drawn normal `n`: the drawn slope undone by the vertical
// exaggeration (tan true = tan drawn / exaggeration); exactly the drawn slope at 1.
float groundSlope(vec3 n) {
    float y = clamp(n.y, 0.0, 1.0);
    float e = frame.analysis.w;
    if (e == 1.0 || e <= 0.0) {
        return degrees(acos(y));
    }
    return degrees(atan(sqrt(max(1.0 - y * y, 0.0)), y * e));
}

// The look's shading (linear): materials, detail normals, sun (shadowed) and sky (occluded)
// light, haze that takes the sky's colour. `texels` is how many texels a pixel spans.
vec3 lookShade(vec3 world, vec3 n, float alt, float curv, vec2 light, float texels) {
    vec2 xz = world.xz;
    float deg = groundSlope(n);
    float rough;
    vec2 down = length(n.xz) > 1e-6 ? normalize(n.xz) : vec2(1.0, 0.0);
    vec3 albedo = materialAt(deg, alt, curv, xz, down, rough);
    // Detail normals from two octaves of value noise, faded out where a pixel spans texels.
    float fade = 1.0 - smoothstep(0.5, 3.0, texels);
    vec3 d1 = valueNoise(xz * 0.45);
    vec3 d2 = valueNoise(xz * 1.7);
    vec2 g = d1.xy * 0.45 + d2.xy * 1.7 * 0.35;
    float k = frame.look.z * fade * (0.15 + 0.6 * rough);
    vec3 nd = normalize(n + k * vec3(-g.x, 0.0, -g.y));
    vec3 l = normalize(frame.light.xyz);
    vec3 sun = sunColour(l);
    vec3 sky = skyLight(l);
    vec3 c = albedo * (sun * max(dot(nd, l), 0.0) * light.x
                       + sky * light.y * (0.55 + 0.45 * nd.y));
    vec3 view = world - frame.eye.xyz;
    float haze = 1.0 - exp(-frame.shade.x * length(view));
    return mix(c, skyColour(normalize(view), l), clamp(haze, 0.0, 1.0));
}

// The view ray through the centre of pixel p (fractional p: between pixels), normalized.
vec3 rayAt(vec2 p) {
    vec4 near = frame.inv_view_proj * vec4((p + 0.5) / vec2(pc.size) * 2.0 - 1.0, 1.0, 1.0);
    return normalize(near.xyz / near.w - frame.eye.xyz);
}

// The linear colour of a pixel showing the sky along `dir`.
vec3 skyPixel(vec3 dir) {
    if ((uint(frame.doc.w) & VIEW_LOOK) == 0u) {
        return PLAIN_SKY;
    }
    return skyColour(dir, normalize(frame.light.xyz));
}

// The sea's surface slope at xz: the gradients of four octaves of value noise, each drifting
// with time and the small ones faster (the Perlin tutorial's rolling water), an octave fading
// out where a pixel spans a good part of its wavelength (`texels` per pixel).
vec2 waveSlope(vec2 xz, float time, float texels) {
    vec2 g = vec2(0.0);
    float wavelength = 64.0;
    for (int i = 0; i < 4; i++) {
        float f = 1.0 / wavelength;
        vec2 drift = vec2(0.6, 0.35) * time * (0.3 + 0.25 * float(i));
        vec3 v = valueNoise(xz * f + drift + vec2(17.0 * float(i)));
        float fade = 1.0 - smoothstep(0.15, 0.6, texels * f);
        g += 0.09 * v.xy * fade;
        wavelength *= 0.45;
    }
    return g;
}

// The water's surface at distance t0 along `dir` (pixel p), over `depth` height units of water
// (1e30: no ground under it in view): `col`, the light through it, with the sky reflected by
// Fresnel off the waves, the sun's glitter where the terrain does not shadow it, foam in patches
// where it is shallow, the surface's `haze` (0: its caller hazes), and the waterline fading
// into `c` (the ground as it is, hazed already).
vec3 waterSurface(vec3 col, vec3 c, ivec2 p, vec3 dir, float t0, float depth, bool look,
                  float haze) {
    float vs = max(frame.eye.w, 1e-6);
    vec3 l = normalize(frame.light.xyz);
    vec3 w = frame.eye.xyz + t0 * dir;
    // Texels a pixel spans on the water (longer at grazing angles).
    float angle = length(rayAt(vec2(p) + vec2(1.0, 0.0)) - dir);
    float texels = t0 * angle / sqrt(max(-dir.y, 0.01));
    vec2 g = waveSlope(w.xz, frame.analysis.z, texels);
    vec3 n = normalize(vec3(-g.x, 1.0, -g.y));
    float fresnel = 0.02 + 0.98 * pow(1.0 - max(dot(-dir, n), 0.0), 5.0);
    vec3 r = reflect(dir, n);
    r.y = abs(r.y);
    vec3 sky = look ? skyColour(r, l) : PLAIN_SKY;
    vec3 sun = look ? sunColour(l) : vec3(1.0);
    float visible = (uint(frame.doc.w) & VIEW_LIGHTING) != 0u ? lightAt(w.xz, false, texels).x : 1.0;
    float glitter = pow(max(dot(r, l), 0.0), 300.0) * 4.0 * visible;
    col = mix(col, sky, fresnel) + sun * glitter;
    // Foam in patches within a few thousandths of a height unit of the ground, broken up by
    // the waves (a continuous band read as a white contour line).
    float shore = 1.0 - smoothstep(0.0, 0.006 * vs, depth);
    float breakup = valueNoise(w.xz * 0.12 + vec2(0.4, 0.25) * frame.analysis.z).z;
    float foam = shore * smoothstep(0.45, 0.85, breakup + 0.3 * shore);
    vec3 lit = look ? sun * max(l.y, 0.0) * visible + sky * 0.6 : vec3(1.0);
    col = mix(col, vec3(0.85, 0.88, 0.9) * lit, 0.5 * foam);
    if (haze > 0.0) {
        col = mix(col, look ? skyColour(dir, l) : PLAIN_SKY, haze);
    }
    // The waterline is soft: the last thousandth of a height unit fades into the ground.
    col = mix(c, col, smoothstep(0.0, 0.001 * vs, depth));
    return col;
}

// Pixel p seen through the sea: the ray `dir` from the eye, showing `c` (the terrain at distance
// t_ground and world height ground_y; t_ground < 0 for the sky). The water fills the box over
// the document's rectangle below the sea level; where the ray crosses it before the ground, the
// linear colour through it: what lies behind dimmed toward the deep colour by the path in the
// water and, where the ray enters through the surface, the sky reflected by Fresnel off the
// waves, the sun's glitter where the terrain does not shadow it, foam where it is shallow, and
// the haze of the surface's distance.
vec3 seaOver(vec3 c, ivec2 p, vec3 dir, float t_ground, float ground_y, bool look) {
    float vs = max(frame.eye.w, 1e-6);
    float sea = frame.shade.w * vs;
    vec3 eye = frame.eye.xyz;
    const float beyond = 1e30;
    // Where the ray is in the box: [t0, t1]; `top`: it enters through the surface.
    float t0 = 0.0;
    float t1 = beyond;
    vec2 o = eye.xz;
    vec2 dd = dir.xz;
    vec2 hi = vec2(frame.doc.xy - 1);
    for (int a = 0; a < 2; a++) {
        if (abs(dd[a]) < 1e-12) {
            if (o[a] < 0.0 || o[a] > hi[a]) {
                return c;
            }
            continue;
        }
        float ta = (0.0 - o[a]) / dd[a];
        float tb = (hi[a] - o[a]) / dd[a];
        t0 = max(t0, min(ta, tb));
        t1 = min(t1, max(ta, tb));
    }
    bool top = false;
    if (dir.y < 0.0) {
        float ts = (sea - eye.y) / dir.y;
        if (ts > t0) {
            t0 = ts;
            top = true;
        }
    } else if (dir.y > 0.0) {
        t1 = min(t1, (sea - eye.y) / dir.y);
    } else if (eye.y > sea) {
        return c;
    }
    bool ground_in = t_ground >= 0.0 && t_ground <= t1;
    float end = ground_in ? t_ground : t1;
    if (t0 >= end) {
        return c;
    }
    // The sea ends at the document's edges with no wall: a ray entering through a side shows
    // the ground there under the water column above it, as seen from above, and nothing where
    // it meets no ground.
    bool eye_in = eye.y < sea && all(greaterThanEqual(o, vec2(0.0))) && all(lessThanEqual(o, hi));
    bool side = !top && !eye_in;
    if (side && !ground_in) {
        return c;
    }
    // Light in the water fades by e over a twelfth of a height unit of path.
    float k = 12.0 / vs;
    float path = side ? sea - ground_y : end - t0;
    vec3 deep = vec3(0.012, 0.055, 0.085);
    vec3 col = mix(deep, c * vec3(0.55, 0.82, 0.80), exp(-k * path));
    if (top) {
        col = waterSurface(col, c, p, dir, t0, ground_in ? sea - ground_y : beyond, look, 0.0);
    }
    float haze = clamp(1.0 - exp(-frame.shade.x * t0), 0.0, 1.0);
    return mix(col, look ? skyColour(dir, normalize(frame.light.xyz)) : PLAIN_SKY, haze);
}

// Where the rivers' water stands over the terrain pixel p (world position `ground`, at distance
// t_ground along `dir`; `coarse`: drawn from a coarse node): the ground seen through the water
// from where the ray meets its surface (the surface's height read under the ground point, so a
// shallow river's parallax is ignored), with the sea's surface; `c` elsewhere.
vec3 riverOver(vec3 c, ivec2 p, vec3 dir, float t_ground, vec3 ground, bool coarse, bool look) {
    float vs = max(frame.eye.w, 1e-6);
    float surface = riverAt(ground.xz, coarse) * vs;
    float depth = surface - ground.y;
    if (!(depth > 0.0)) {
        return c;
    }
    float t0 = dir.y < 0.0 ? clamp((surface - frame.eye.y) / dir.y, 0.0, t_ground) : 0.0;
    // Rivers are shallow and murkier than the sea: light fades by e over a sixtieth of a
    // height unit (the sea's twelfth would leave a river of a hundredth nearly clear).
    float k = 60.0 / vs;
    vec3 deep = vec3(0.012, 0.055, 0.085);
    vec3 col = mix(deep, c * vec3(0.55, 0.82, 0.80), exp(-k * (t_ground - t0)));
    // The water hazed by its distance before its waterline meets the ground, which is hazed
    // already (hazing both again drew a seam along distant shores).
    float haze = clamp(1.0 - exp(-frame.shade.x * t0), 0.0, 1.0);
    return waterSurface(col, c, p, dir, t0, depth, look, haze);
}

// The linear colour of terrain pixel p at depth d; `tonemap` says whether it is presented
// through the look's tone map.
vec3 shadeTerrain(ivec2 p, float d, out bool tonemap) {
    vec3 world = worldAt(p, d);
    vec4 surface = texelFetch(surface_image, p, 0);
    uint node = texelFetch(node_image, p, 0).r;
    uint level = node & (GBUF_COARSE - 1u);
    bool coarse_node = (node & GBUF_COARSE) != 0u;
    vec3 n = vec3(surface.x, sqrt(max(1.0 - dot(surface.xy, surface.xy), 0.0)), surface.y);
    float curvature = surface.z;
    float overlay = surface.w;
    vec3 dx = pixelStep(p, ivec2(1, 0), d, world);
    vec3 dy = pixelStep(p, ivec2(0, 1), d, world);
    // The texels a pixel spans: the geometric mean of its steps to the next pixels (their
    // longer would blur slopes seen edge-on; their shorter alias).
    float footprint = sqrt(length(dx.xz) * length(dy.xz));
    if (!coarse_node && pc.heights_cols > 0) {
        vec3 pn;
        float pcurv;
        if (surfaceAt(world.xz, footprint, pn, pcurv)) {
            n = pn;
            curvature = pcurv;
        }
    }
    float pixel_overlay;
    if (!coarse_node && pc.overlay_cols > 0 && (uint(frame.doc.w) & VIEW_OVERLAY) != 0u
        && overlayAt(world.xz, pixel_overlay)) {
        overlay = pixel_overlay;
    }

    uint flags = uint(frame.doc.w);
    float vs = frame.eye.w;
    float lo = frame.shade.y * vs;
    float hi = frame.shade.z * vs;
    // A flat document has no range: a thousandth of a height unit keeps depth noise in world.y
    // from flipping its colours.
    float t = clamp((world.y - lo) / max(hi - lo, 1e-3 * vs), 0.0, 1.0);
    float slope = 1.0 - n.y;
    vec3 low = vec3(0.23, 0.36, 0.16);
    vec3 mid = vec3(0.45, 0.40, 0.30);
    vec3 high = vec3(0.92, 0.93, 0.95);
    vec3 rock = vec3(0.42, 0.39, 0.36);
    vec3 albedo = mix(mix(low, mid, smoothstep(0.15, 0.6, t)), high, smoothstep(0.75, 0.92, t));
    albedo = mix(albedo, rock, smoothstep(0.25, 0.55, slope));
    if ((flags & VIEW_LOD_COLOURS) != 0u) {
        // Levels 7 and up (coarse, far) alternate two greys.
        albedo = level < 7u ? LOD_COLOURS[level]
                            : LOD_COLOURS[7] * (level % 2u == 0u ? 0.8 : 1.2);
    }
    vec3 l = normalize(frame.light.xyz);
    // Ambient (occluded by the horizons around) plus the sun (where it is not shadowed).
    vec2 light = (flags & VIEW_LIGHTING) != 0u ? lightAt(world.xz, coarse_node, footprint) : vec2(1.0);
    bool look = (flags & VIEW_LOOK) != 0u && (flags & VIEW_LOD_COLOURS) == 0u;
    vec3 c;
    if (look) {
        vec2 fw = abs(dx.xz) + abs(dy.xz);
        c = lookShade(world, n, t, curvature, light, length(fw));
    } else {
        c = albedo * (frame.light.w * light.y
                      + (1.0 - frame.light.w) * max(dot(n, l), 0.0) * light.x);
        float dist = length(world - frame.eye.xyz);
        float fog = 1.0 - exp(-frame.shade.x * dist);
        c = mix(c, PLAIN_SKY, clamp(fog, 0.0, 1.0));
    }
    if ((flags & VIEW_OVERLAY_WATER) != 0u) {
        // Water over the terrain: blue by its depth (0: none, 1: deep).
        c = mix(c, vec3(0.08, 0.30, 0.85), 0.8 * clamp(overlay, 0.0, 1.0));
    } else if ((flags & VIEW_OVERLAY_UPLIFT) != 0u) {
        // The uplift map: orange where the rock rises faster than the rate (full at 2), teal
        // where slower (full at 0), none at 1.
        c = mix(c, vec3(0.95, 0.45, 0.08), 0.6 * clamp(overlay - 1.0, 0.0, 1.0));
        c = mix(c, vec3(0.05, 0.55, 0.60), 0.6 * clamp(1.0 - overlay, 0.0, 1.0));
    } else if ((flags & VIEW_OVERLAY) != 0u) {
        // Where the overlay (a layer's mask) hides, a magenta tint: half at 0, none at 1.
        c = mix(c, vec3(0.85, 0.12, 0.55), 0.5 * (1.0 - clamp(overlay, 0.0, 1.0)));
    }
    if ((flags & VIEW_MATERIALS) != 0u) {
        // Each material's colour by its weight, unlit: what an exported weight or splat map
        // gives recoloured with the same colours.
        float w[5];
        materialWeights(groundSlope(n), t, curvature, world.xz, frame.rules0, frame.rules1, w);
        c = frame.rock.rgb * w[0] + frame.scree.rgb * w[1] + frame.grass.rgb * w[2]
          + frame.sand.rgb * w[3] + frame.snow.rgb * w[4];
        look = false;
    }
    if ((flags & VIEW_CURVATURE) != 0u) {
        // Unlit: blue where concave (valleys, hollows), orange where convex (ridges, crests),
        // full at the map's curvature either way (render::analysis::curvature_colour).
        float k = clamp(curvature * frame.look.w, -1.0, 1.0);
        vec3 flat_ = vec3(0.86, 0.86, 0.82);
        c = k > 0.0 ? mix(flat_, vec3(0.10, 0.30, 0.85), k) : mix(flat_, vec3(0.85, 0.38, 0.10), -k);
        look = false;
    }
    if ((flags & VIEW_SLOPE) != 0u) {
        // Unlit, so the colour reads the ground's angle (true degrees wherever the document
        // knows its units, whatever the exaggeration; else as drawn).
        float deg = groundSlope(n);
        c = slopeColour(deg, frame.analysis.x);
        // The heat map's colours as they are: not tone-mapped.
        look = false;
    }
    if ((flags & VIEW_CONTOURS) != 0u) {
        float scale = 1.0 / (max(vs, 1e-6) * max(frame.analysis.y, 1e-9));
        float h = world.y * scale;
        float fw = (abs(dx.y) + abs(dy.y)) * scale;
        float f = fract(h);
        float w = max(fw * 1.2, 1e-4);
        // Flat ground lying exactly on a level (no change across the pixel) is not a line.
        float line = (1.0 - smoothstep(0.0, w, min(f, 1.0 - f))) * smoothstep(1e-4, 1e-3, fw);
        c = mix(c, vec3(0.05, 0.05, 0.08), 0.85 * line);
    }
    if ((flags & VIEW_CURSOR) != 0u) {
        vec2 centre = frame.cursor.xy;
        float d0 = length(world.xz - centre);
        float fw = abs(length(world.xz + dx.xz - centre) - d0)
                 + abs(length(world.xz + dy.xz - centre) - d0);
        float a = max(ring(d0, fw, frame.cursor.z), 0.6 * ring(d0, fw, frame.cursor.w));
        c = mix(c, vec3(1.0, 0.85, 0.2), a);
    }
    if ((flags & VIEW_WIREFRAME) != 0u) {
        c = vec3(0.05, 0.05, 0.05) + 0.5 * c;
    }
    tonemap = look;
    return c;
}

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (any(greaterThanEqual(p, pc.size))) {
        return;
    }
    float d = texelFetch(depth_image, p, 0).r;
    bool look = (uint(frame.doc.w) & VIEW_LOOK) != 0u;
    bool tonemap = look;
    vec3 c;
    vec3 dir;
    float t_ground = -1.0;
    float ground_y = 0.0;
    if (d > 0.0) {
        c = shadeTerrain(p, d, tonemap);
        vec3 world = worldAt(p, d);
        vec3 v = world - frame.eye.xyz;
        t_ground = length(v);
        dir = v / max(t_ground, 1e-20);
        ground_y = world.y;
        if (WATER && (uint(frame.doc.w) & VIEW_RIVERS) != 0u) {
            bool coarse = (texelFetch(node_image, p, 0).r & GBUF_COARSE) != 0u;
            c = riverOver(c, p, dir, t_ground, world, coarse, look);
        }
    } else {
        dir = rayAt(vec2(p));
        c = skyPixel(dir);
    }
    if (WATER && (uint(frame.doc.w) & VIEW_SEA) != 0u) {
        c = seaOver(c, p, dir, t_ground, ground_y, look);
    }
    c = tonemap ? present(c) : pow(c, vec3(1.0 / 2.2));
    imageStore(out_image, p, vec4(c, 1.0));
}

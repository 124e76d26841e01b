// The shading surface of the heights at one document texel: the normal from central
// differences (one-sided at the document's edges, where clamping repeats the edge texel) and the
// Laplacian, both in world units. The terrain's vertex stage used it per vertex until
// 2026-11-27; the fragment stage (terrain_frag_body.glsl) now uses it per pixel, so the shading
// does not depend on how coarse the mesh is. Needs page_fetch.glsl first.
#ifndef SCARP_PAGE_SURFACE_GLSL
#define SCARP_PAGE_SURFACE_GLSL

// xyz: the unit normal; w: the Laplacian of the world heights (world units per texel²; positive:
// concave, a gully). `vs`: world y per height unit.
vec4 texelSurface(PageView v, ivec2 g, float vs) {
    float h = pageHeight(v, g);
    float e = pageHeight(v, g + ivec2(1, 0)), w = pageHeight(v, g - ivec2(1, 0));
    float n = pageHeight(v, g - ivec2(0, 1)), so = pageHeight(v, g + ivec2(0, 1));
    vec3 normal = normalize(vec3(-0.5 * (e - w) * vs, 1.0, -0.5 * (so - n) * vs));
    return vec4(normal, (e + w + n + so - 4.0 * h) * vs);
}

#endif

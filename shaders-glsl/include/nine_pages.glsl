// The nine height pages around one page, each at its own binding: binding (dy + 1) * 3 + (dx + 1)
// of set 0 is the page at (dx, dy) in -1..1 (the order of pages::field::neighbourhood).
// Bound to a placeholder where a page is off the document or holds no memory (its
// bit of `present` clear). Read through constant indices (a switch): no descriptor indexing.
// Needs height_format.glsl first.
#ifndef SCARP_NINE_PAGES_GLSL
#define SCARP_NINE_PAGES_GLSL

layout(set = 0, binding = 0, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s0;
layout(set = 0, binding = 1, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s1;
layout(set = 0, binding = 2, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s2;
layout(set = 0, binding = 3, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s3;
layout(set = 0, binding = 4, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s4;
layout(set = 0, binding = 5, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s5;
layout(set = 0, binding = 6, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s6;
layout(set = 0, binding = 7, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s7;
layout(set = 0, binding = 8, HEIGHT_IMAGE_FORMAT) uniform readonly image2D s8;

float loadSlot(int s, ivec2 q) {
    switch (s) {
    case 0: return imageLoad(s0, q).r;
    case 1: return imageLoad(s1, q).r;
    case 2: return imageLoad(s2, q).r;
    case 3: return imageLoad(s3, q).r;
    case 4: return imageLoad(s4, q).r;
    case 5: return imageLoad(s5, q).r;
    case 6: return imageLoad(s6, q).r;
    case 7: return imageLoad(s7, q).r;
    default: return imageLoad(s8, q).r;
    }
}

// World height at `rel` texels from the middle page's first texel (each coordinate in
// -side..2*side-1) of pages `side` texels a side: decoded, or `flat_height` where that page has
// no image.
float nineHeight(ivec2 rel, int side, uint present, float flat_height, float height_min,
                 float height_range) {
    ivec2 d = ivec2(rel.x < 0 ? -1 : (rel.x >= side ? 1 : 0),
                    rel.y < 0 ? -1 : (rel.y >= side ? 1 : 0));
    int slot = (d.y + 1) * 3 + (d.x + 1);
    if ((present & (1u << uint(slot))) == 0u) {
        return flat_height;
    }
    return decodeHeight(loadSlot(slot, rel - d * side), height_min, height_range);
}

#endif

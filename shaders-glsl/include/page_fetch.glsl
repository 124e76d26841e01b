// Heights of the document around one page, read straight from the page images.
//
// A draw (or a tile-bounds dispatch) binds the 3x3 neighbourhood of one page: binding
// (dy + 1) * 3 + (dx + 1) of set PAGE_SET is the page at offset (dx, dy). Pages that hold no
// memory (never touched: flat) are bound to a placeholder and have their bit clear in `present`.
// Every slot is read through a constant binding index (a switch), so no descriptor indexing is
// needed. Needs height_format.glsl and PAGE_SET defined first.
#ifndef SCARP_PAGE_FETCH_GLSL
#define SCARP_PAGE_FETCH_GLSL

layout(set = PAGE_SET, binding = 0, HEIGHT_IMAGE_FORMAT) uniform readonly image2D page_nw;
layout(set = PAGE_SET, binding = 1, HEIGHT_IMAGE_FORMAT) uniform readonly image2D page_n;
layout(set = PAGE_SET, binding = 2, HEIGHT_IMAGE_FORMAT) uniform readonly image2D page_ne;
layout(set = PAGE_SET, binding = 3, HEIGHT_IMAGE_FORMAT) uniform readonly image2D page_w;
layout(set = PAGE_SET, binding = 4, HEIGHT_IMAGE_FORMAT) uniform readonly image2D page_c;
layout(set = PAGE_SET, binding = 5, HEIGHT_IMAGE_FORMAT) uniform readonly image2D page_e;
layout(set = PAGE_SET, binding = 6, HEIGHT_IMAGE_FORMAT) uniform readonly image2D page_sw;
layout(set = PAGE_SET, binding = 7, HEIGHT_IMAGE_FORMAT) uniform readonly image2D page_s;
layout(set = PAGE_SET, binding = 8, HEIGHT_IMAGE_FORMAT) uniform readonly image2D page_se;

float loadSlot(int slot, ivec2 p) {
    switch (slot) {
    case 0: return imageLoad(page_nw, p).r;
    case 1: return imageLoad(page_n, p).r;
    case 2: return imageLoad(page_ne, p).r;
    case 3: return imageLoad(page_w, p).r;
    case 4: return imageLoad(page_c, p).r;
    case 5: return imageLoad(page_e, p).r;
    case 6: return imageLoad(page_sw, p).r;
    case 7: return imageLoad(page_s, p).r;
    default: return imageLoad(page_se, p).r;
    }
}

struct PageView {
    ivec2 origin;      // first texel of the centre page
    int size;          // page size (texels)
    uint present;      // bit slot set: that page has images
    ivec2 doc;         // document size (texels)
    float flat_height; // height of pages without images
    float height_min;  // r16 range
    float height_range;
};

// World height at document texel g (clamped into the document); g must lie in the 3x3
// neighbourhood of the centre page.
float pageHeight(PageView v, ivec2 g) {
    g = clamp(g, ivec2(0), v.doc - 1);
    ivec2 rel = g - v.origin;
    ivec2 d = ivec2(rel.x < 0 ? -1 : (rel.x >= v.size ? 1 : 0),
                    rel.y < 0 ? -1 : (rel.y >= v.size ? 1 : 0));
    int slot = (d.y + 1) * 3 + (d.x + 1);
    if ((v.present & (1u << uint(slot))) == 0u) {
        return v.flat_height;
    }
    return decodeHeight(loadSlot(slot, rel - d * v.size), v.height_min, v.height_range);
}

#endif

// Heights of the document around one block of pages, read straight from the page images; with
// PAGE_OVERLAY defined, also an overlay field's value over the block's own pages and the next
// row and column of pages (binding 1).
//
// A draw (or a tile-bounds dispatch) binds the pages of one block of PAGE_BLOCK x PAGE_BLOCK
// pages plus a one-page ring around it (tile edges and normals reach into neighbours): array
// element (dy + 1) * PAGE_SPAN + (dx + 1) of binding 0 of set PAGE_SET is the page at offset
// (dx, dy) from the block's first page. Pages that hold no memory (never touched: flat) are bound
// to a placeholder and have their bit clear in `present`. Elements are read through constant
// indices (a switch), so no descriptor indexing is needed (lavapipe has none). Needs
// height_format.glsl and PAGE_SET defined first.
#ifndef SCARP_PAGE_FETCH_GLSL
#define SCARP_PAGE_FETCH_GLSL

// PAGE_BLOCK, PAGE_SPAN, PAGE_SLOTS.
#include "constants.glsl"

layout(set = PAGE_SET, binding = 0, HEIGHT_IMAGE_FORMAT) uniform readonly image2D pages[PAGE_SLOTS];

#define SLOT(i) case i: return imageLoad(pages[i], p).r;

float loadSlot(int slot, ivec2 p) {
    switch (slot) {
    SLOT(0) SLOT(1) SLOT(2) SLOT(3) SLOT(4) SLOT(5) SLOT(6) SLOT(7) SLOT(8) SLOT(9)
    SLOT(10) SLOT(11) SLOT(12) SLOT(13) SLOT(14) SLOT(15) SLOT(16) SLOT(17) SLOT(18) SLOT(19)
    SLOT(20) SLOT(21) SLOT(22) SLOT(23) SLOT(24) SLOT(25) SLOT(26) SLOT(27) SLOT(28) SLOT(29)
    SLOT(30) SLOT(31) SLOT(32) SLOT(33) SLOT(34)
    default: return imageLoad(pages[35], p).r;
    }
}

struct PageView {
    ivec2 origin;      // first texel of the block's first page
    int size;          // page size (texels)
    uvec2 present;     // bit slot (low word: slots 0..31, high: 32..35): that page has images
    ivec2 doc;         // document size (texels)
    float flat_height; // height of pages without images
    float height_min;  // r16 range
    float height_range;
};

// World height at document texel g (clamped into the document); g must lie in the block or the
// ring of pages around it.
float pageHeight(PageView v, ivec2 g) {
    g = clamp(g, ivec2(0), v.doc - 1);
    ivec2 rel = g - v.origin;
    // Pages are a power of two a side (DocumentDesc checks it): the page and the texel in it by
    // an arithmetic shift and a mask, floor division's -1 in the ring before the block
    // (rel >= -size there) included, no integer division.
    ivec2 d = rel >> findMSB(v.size);
    int slot = (d.y + 1) * PAGE_SPAN + (d.x + 1);
    uint bits = slot < 32 ? v.present.x : v.present.y;
    if ((bits & (1u << uint(slot & 31))) == 0u) {
        return v.flat_height;
    }
    return decodeHeight(loadSlot(slot, rel & (v.size - 1)), v.height_min, v.height_range);
}

#ifdef PAGE_OVERLAY
// An overlay field (r32f, a layer's mask) over the block's PAGE_BLOCK x PAGE_BLOCK pages and the
// next row and column of pages (OVERLAY_SPAN per side): element dy * OVERLAY_SPAN + dx is the
// page at (dx, dy) from the block's first page; its bit in present.y >> OVERLAY_PRESENT_SHIFT
// says it has an image.
layout(set = PAGE_SET, binding = 1, r32f) uniform readonly image2D overlay[OVERLAY_SLOTS];

#define OSLOT(i) case i: return imageLoad(overlay[i], p).r;
#if OVERLAY_SLOTS != 25
#error "loadOverlay's cases are written for 25 overlay slots"
#endif

float loadOverlay(int slot, ivec2 p) {
    switch (slot) {
    OSLOT(0) OSLOT(1) OSLOT(2) OSLOT(3) OSLOT(4) OSLOT(5) OSLOT(6) OSLOT(7) OSLOT(8) OSLOT(9)
    OSLOT(10) OSLOT(11) OSLOT(12) OSLOT(13) OSLOT(14) OSLOT(15) OSLOT(16) OSLOT(17) OSLOT(18)
    OSLOT(19) OSLOT(20) OSLOT(21) OSLOT(22) OSLOT(23)
    default: return imageLoad(overlay[24], p).r;
    }
}

// The overlay at texel g, clamped into the document and the block with its next row and column
// of pages (the edge vertices a block's nodes share with the next block read the next block's
// first texel, as that block's own vertices do: no seam); `flat_value` where the page has no
// image.
float pageOverlay(PageView v, ivec2 g, float flat_value) {
    g = clamp(g, ivec2(0), v.doc - 1);
    ivec2 rel = clamp(g - v.origin, ivec2(0), ivec2(OVERLAY_SPAN * v.size - 1));
    ivec2 d = rel >> findMSB(v.size);
    int slot = d.y * OVERLAY_SPAN + d.x;
    if (((v.present.y >> (OVERLAY_PRESENT_SHIFT + uint(slot))) & 1u) == 0u) {
        return flat_value;
    }
    return loadOverlay(slot, rel & (v.size - 1));
}
#endif

#endif

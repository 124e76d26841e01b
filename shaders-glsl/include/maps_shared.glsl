// The maps kernels' push constants, mirrored field for field by maps::MapsPush and
// maps::SurfacePagePush (tests/shared_layout.rs checks every offset).
#ifndef SCARP_MAPS_SHARED_GLSL
#define SCARP_MAPS_SHARED_GLSL

struct MapsPush {
    ivec2 size;     // the region, texels
    ivec2 origin;   // its texel (0, 0) in the document
    vec2 tau;       // metres between texels along x and y
    float unit;     // metres per height unit
    float lo;       // the altitude rules' range, height units (hi below)
    vec4 rules0;    // grass slope, rock slope, snow line, sand line
    vec4 rules1;    // snow slope, softness, breakup, scree curvature
    float hi;
    float pad0;
    float pad1;
    float pad2;
};

// One page of a surface map (maps/surface_page.comp, maps::field).
struct SurfacePagePush {
    ivec2 origin;       // the page's first texel in the document
    ivec2 doc;          // the document's size, texels
    vec2 tau;           // metres between texels along x and y
    float unit;         // metres per height unit
    int side;           // pages are side x side texels
    uint present;       // bit (dy + 1) * 3 + (dx + 1): the height page at (dx, dy) has an image
    float flat_height;  // height of pages without images
    float height_min;   // r16 range
    float height_range;
    int map;            // maps::Surface: 0 slope, 1 curvature, 2 profile, 3 plan
    float full;         // above 0: the two-sided tint 1 - clamp(v / full, -1, 1) instead of v
    ivec2 size;         // texels of the page inside the document
};

#endif

// The maps kernels' push constants, mirrored field for field by maps::MapsPush
// (tests/shared_layout.rs checks every offset).
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

#endif

// GeoMipMapping terrain vertex shader: one shared 65x65 grid (the vertex index is the grid
// position), per-tile instance data, heights fetched from the page images.
#extension GL_GOOGLE_include_directive : require
#include "render_shared.glsl"
#include "height_format.glsl"
#define PAGE_SET 1
#include "page_fetch.glsl"

layout(set = 0, binding = 0, std140) uniform Frame { FrameData frame; };
layout(set = 0, binding = 1, std430) readonly buffer Tiles { TileDraw tiles[]; };
layout(push_constant) uniform Push { PagePush pc; };

layout(location = 0) out vec3 out_world;
layout(location = 1) out vec3 out_normal;
layout(location = 2) flat out uint out_level;

void main() {
    TileDraw t = tiles[gl_InstanceIndex];
    ivec2 local = ivec2(gl_VertexIndex % TILE_VERTS, gl_VertexIndex / TILE_VERTS);
    PageView v = PageView(pc.block_origin, frame.doc.z, pc.present, frame.doc.xy,
                          frame.heights.x, frame.heights.y, frame.heights.z);
    ivec2 g = min(t.origin + local, frame.doc.xy - 1);
    float vs = frame.eye.w;
    float h = pageHeight(v, g);
    // Normal from central differences (one-sided at the document's edges, where clamping
    // repeats the edge texel).
    float hx = pageHeight(v, g + ivec2(1, 0)) - pageHeight(v, g - ivec2(1, 0));
    float hz = pageHeight(v, g + ivec2(0, 1)) - pageHeight(v, g - ivec2(0, 1));
    out_normal = normalize(vec3(-0.5 * hx * vs, 1.0, -0.5 * hz * vs));
    out_world = vec3(float(g.x), h * vs, float(g.y));
    out_level = t.level;
    gl_Position = frame.view_proj * vec4(out_world, 1.0);
}

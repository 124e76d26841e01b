// Page storage formats. Kernels are compiled twice: as they are (r32f, heights in world units)
// and with HEIGHT_R16 defined (r16 UNORM over [height_min, height_min + height_range]). Kernels
// work in world units; an r16 height is quantized after every instance, so results do not depend
// on how instances are batched, and texels no instance touched are copied bit for bit.
#ifndef SCARP_HEIGHT_FORMAT_GLSL
#define SCARP_HEIGHT_FORMAT_GLSL

#ifdef HEIGHT_R16
#define HEIGHT_IMAGE_FORMAT r16
#else
#define HEIGHT_IMAGE_FORMAT r32f
#endif

// r16 level (0..65535) of world height h, clamped into the range. floor(x + 0.5), not round():
// GLSL leaves round()'s ties to the implementation. CPU twin: DocumentDesc::encode_r16.
float heightLevel(float h, float height_min, float height_range) {
    return floor(clamp((h - height_min) * (1.0 / height_range), 0.0, 1.0) * 65535.0 + 0.5);
}

// World height of r16 level `level`; precise: no fma, so the CPU twin (decode_r16) rounds alike.
float levelHeight(float level, float height_min, float height_range) {
    precise float h = height_min + (level * (1.0 / 65535.0)) * height_range;
    return h;
}

// World height of a stored value.
float decodeHeight(float stored, float height_min, float height_range) {
#ifdef HEIGHT_R16
    // Recover the exact level first, whatever rounding the unorm conversion did.
    return levelHeight(floor(stored * 65535.0 + 0.5), height_min, height_range);
#else
    return stored;
#endif
}

// The height an r16 page can hold nearest to h (clamped into the range), in world units.
float quantizeHeight(float h, float height_min, float height_range) {
#ifdef HEIGHT_R16
    return levelHeight(heightLevel(h, height_min, height_range), height_min, height_range);
#else
    return h;
#endif
}

// Stored value of a quantized world height (exactly representable in r16).
float encodeHeight(float h, float height_min, float height_range) {
#ifdef HEIGHT_R16
    return heightLevel(h, height_min, height_range) / 65535.0;
#else
    return h;
#endif
}

#endif

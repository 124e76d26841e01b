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

// World height of a stored value.
float decodeHeight(float stored, float height_min, float height_range) {
#ifdef HEIGHT_R16
    // Recover the exact level first (whatever rounding the unorm conversion did), then the same
    // operations as the CPU twin; precise: no fma.
    float steps = floor(stored * 65535.0 + 0.5);
    precise float h = height_min + (steps * (1.0 / 65535.0)) * height_range;
    return h;
#else
    return stored;
#endif
}

// The height an r16 page can hold nearest to h (clamped into the range), in world units.
float quantizeHeight(float h, float height_min, float height_range) {
#ifdef HEIGHT_R16
    // floor(x + 0.5), not round(): GLSL leaves round()'s ties to the implementation.
    float steps = floor(clamp((h - height_min) * (1.0 / height_range), 0.0, 1.0) * 65535.0 + 0.5);
    precise float q = height_min + (steps * (1.0 / 65535.0)) * height_range;
    return q;
#else
    return h;
#endif
}

// Stored value of a quantized world height (exactly representable in r16).
float encodeHeight(float h, float height_min, float height_range) {
#ifdef HEIGHT_R16
    return floor(clamp((h - height_min) * (1.0 / height_range), 0.0, 1.0) * 65535.0 + 0.5) / 65535.0;
#else
    return h;
#endif
}

#endif

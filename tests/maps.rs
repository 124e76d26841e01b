//! Terrain maps (docs/maps.md): the material weight kernel against its CPU twin, and the 8-bit
//! levels of the splat maps. GPU tests run with validation on; any message fails.

mod common;

use common::{assert_no_validation_messages, gpu};
use scarp::maps::gpu::Kernels;
use scarp::maps::materials::{to_levels, NAMES};
use scarp::maps::MapsPush;
use scarp::maps::Surface;
use scarp::pages::geometry::{DocumentDesc, Units};
use scarp::render::look::PRESETS;

#[test]
fn material_weights_on_the_gpu_match_the_twin_within_an_8_bit_level() {
    let gpu = gpu();
    let kernels = Kernels::new(&gpu).unwrap();
    let (w, h) = (300u32, 200u32);
    // Steep enough for rock, scree in the gullies, sand low and snow high.
    let mut heights = common::fbm_terrain(w, h, 11, 40.0, 6);
    let (lo, hi) = scarp::terrain::formats::min_max(&heights);
    // A flat shore along the left: sand.
    for (i, v) in heights.iter_mut().enumerate() {
        if i as u32 % w < 30 {
            *v = lo;
        }
    }
    let desc = DocumentDesc {
        units: Units {
            texel_size: Some(4.0),
            height_unit: Some(600.0),
            ..Units::default()
        },
        ..common::doc(w, h, 128)
    };
    for (name, m) in PRESETS {
        let p = MapsPush::new(&desc, [w, h], [40, 12], (lo, hi), &m);
        let on_gpu = kernels.weights(&gpu, &heights, &p).unwrap();
        let on_cpu = scarp::maps::cpu::weights_region(&heights, &p);
        let worst = on_gpu
            .iter()
            .zip(&on_cpu)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(
            worst * 255.0 <= 1.0,
            "{name}: GPU and twin differ by {worst}"
        );
        // Every texel's weights sum to 1, and every material shows somewhere on alpine ground.
        let mut most = [0.0f32; 5];
        for t in on_cpu.chunks(5) {
            let sum: f32 = t.iter().sum();
            assert!((sum - 1.0).abs() < 1e-4, "{name}: {t:?}");
            for (m, v) in most.iter_mut().zip(t) {
                *m = m.max(*v);
            }
        }
        if name == "alpine" {
            for (n, m) in NAMES.iter().zip(most) {
                assert!(m > 0.5, "{name}: no {n} (most {m})");
            }
        }
        // The splat levels of every texel sum to 255 exactly.
        for t in on_gpu.chunks(5) {
            let l = to_levels(t);
            assert_eq!(l.iter().map(|&v| u32::from(v)).sum::<u32>(), 255);
        }
    }
    assert_no_validation_messages(&gpu);
}

/// A region past what the device binds at once runs in bands of rows with a row around each:
/// the weights and surface maps of one run, bit for bit (bands of 5 rows here, and of 1).
#[test]
fn map_regions_run_in_bands_give_the_maps_of_one_run() {
    let gpu = gpu();
    let kernels = Kernels::new(&gpu).unwrap();
    let (w, h) = (300u32, 200u32);
    let heights = common::fbm_terrain(w, h, 7, 40.0, 6);
    let desc = DocumentDesc {
        units: Units::metres(3.0),
        ..common::doc(w, h, 128)
    };
    let (lo, hi) = scarp::terrain::formats::min_max(&heights);
    let p = MapsPush::new(&desc, [w, h], [17, 5], (lo, hi), &PRESETS[0].1);
    let whole = kernels.run(&gpu, &heights, &p).unwrap();
    for rows in [5u64, 1] {
        let banded = kernels
            .run_within(&gpu, &heights, &p, u64::from(w) * (rows + 2))
            .unwrap();
        assert!(banded == whole, "bands of {rows} rows differ from one run");
    }
    assert_no_validation_messages(&gpu);
}

#[test]
fn slope_and_curvature_maps_are_true_degrees_and_per_metre_on_the_gpu_as_in_the_twin() {
    let gpu = gpu();
    let kernels = Kernels::new(&gpu).unwrap();
    let (w, h) = (200u32, 150u32);
    let desc = DocumentDesc {
        units: Units {
            texel_size: Some(2.0),
            height_unit: Some(500.0),
            ..Units::default()
        },
        ..common::doc(w, h, 128)
    };
    let m = PRESETS[0].1;
    // A plane rising 30° toward +x: tan 30° · 2 m a texel, in height units of 500 m.
    let rise = (30f32.to_radians().tan() * 2.0) / 500.0;
    let plane: Vec<f32> = (0..w * h).map(|i| (i % w) as f32 * rise).collect();
    let p = MapsPush::new(&desc, [w, h], [0, 0], (0.0, 1.0), &m);
    let maps = kernels.run(&gpu, &plane, &p).unwrap();
    for y in 0..h {
        for x in 1..w - 1 {
            let i = ((y * w + x) as usize) * Surface::COUNT;
            let t = &maps.surface[i..i + Surface::COUNT];
            let (deg, curv) = (t[Surface::Slope as usize], t[Surface::Curvature as usize]);
            assert!((deg - 30.0).abs() < 0.01, "({x}, {y}): {deg}°");
            assert!(curv.abs() < 1e-4, "({x}, {y}): {curv}");
            // A plane bends neither along its slope nor across it.
            assert!(
                t[Surface::Profile as usize].abs() < 1e-5,
                "({x}, {y}): {t:?}"
            );
            assert!(t[Surface::Plan as usize].abs() < 1e-5, "({x}, {y}): {t:?}");
        }
    }
    // A bowl z = r² / 100 m: the Laplacian is 4/100 per metre everywhere inside.
    let bowl: Vec<f32> = (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as f32 * 2.0, (i / w) as f32 * 2.0);
            ((x - 200.0).powi(2) + (y - 150.0).powi(2)) / 100.0 / 500.0
        })
        .collect();
    let on_gpu = kernels.run(&gpu, &bowl, &p).unwrap();
    let on_cpu = scarp::maps::cpu::maps_region(&bowl, &p);
    for (i, (g, c)) in on_gpu
        .surface
        .chunks(Surface::COUNT)
        .zip(on_cpu.surface.chunks(Surface::COUNT))
        .enumerate()
    {
        let (x, y) = (i as u32 % w, i as u32 / w);
        assert!(
            (g[0] - c[0]).abs() < 1e-3,
            "slope at ({x}, {y}): {} vs {}",
            g[0],
            c[0]
        );
        assert!(
            (g[1] - c[1]).abs() < 1e-4,
            "curvature at ({x}, {y}): {} vs {}",
            g[1],
            c[1]
        );
        if (1..w - 1).contains(&x) && (1..h - 1).contains(&y) {
            assert!((c[1] - 0.04).abs() < 1e-3, "({x}, {y}): {}", c[1]);
        }
    }
    assert_no_validation_messages(&gpu);
}

/// Profile and plan curvature (Zevenbergen & Thorne) against surfaces whose curvatures are
/// known: a trough z = y² / 100 m (profile 0.02 / (1 + q²)^1.5 along its fall, plan 0) and a
/// cone z = r / 2 (a pit: plan 1/r, converging; profile 0, straight down its flanks), on the
/// GPU as in the twin; the cone's peak, z = −r / 2, diverges (plan −1/r).
#[test]
fn profile_and_plan_curvature_read_a_trough_and_a_cone_on_the_gpu_as_in_the_twin() {
    let gpu = gpu();
    let kernels = Kernels::new(&gpu).unwrap();
    let (w, h) = (120u32, 100u32);
    let desc = DocumentDesc {
        units: Units {
            texel_size: Some(1.0),
            height_unit: Some(100.0),
            ..Units::default()
        },
        ..common::doc(w, h, 128)
    };
    let p = MapsPush::new(&desc, [w, h], [0, 0], (0.0, 1.0), &PRESETS[0].1);
    let at = |maps: &scarp::maps::Maps, x: u32, y: u32, k: Surface| {
        maps.surface[(y * w + x) as usize * Surface::COUNT + k as usize]
    };
    let check = |name: &str, z: &dyn Fn(f32, f32) -> f32| {
        let heights: Vec<f32> = (0..w * h)
            .map(|i| z((i % w) as f32, (i / w) as f32) / 100.0)
            .collect();
        let g = kernels.run(&gpu, &heights, &p).unwrap();
        let c = scarp::maps::cpu::maps_region(&heights, &p);
        for (i, (a, b)) in g.surface.iter().zip(&c.surface).enumerate() {
            let tol = 1e-5 + 1e-4 * b.abs();
            assert!((a - b).abs() <= tol, "{name} value {i}: GPU {a}, twin {b}");
        }
        c
    };
    let trough = check("trough", &|_, y| (y - 10.0).powi(2) / 100.0);
    for (x, y) in [(30, 40), (60, 60), (90, 80)] {
        let q = 2.0 * (y as f32 - 10.0) / 100.0;
        let want = 0.02 / (1.0 + q * q).powf(1.5);
        let got = at(&trough, x, y, Surface::Profile);
        assert!(
            (got - want).abs() < 1e-4 * want.max(1.0),
            "trough ({x}, {y}): {got} vs {want}"
        );
        assert!(at(&trough, x, y, Surface::Plan).abs() < 1e-5);
    }
    let r = |x: f32, y: f32| (x - 60.0).hypot(y - 50.0);
    let pit = check("pit", &|x, y| r(x, y) / 2.0);
    let peak = check("peak", &|x, y| -r(x, y) / 2.0);
    for (x, y) in [(80u32, 50u32), (60, 80), (40, 30), (75, 65)] {
        let d = r(x as f32, y as f32);
        let (plan, profile) = (
            at(&pit, x, y, Surface::Plan),
            at(&pit, x, y, Surface::Profile),
        );
        assert!(
            (plan - 1.0 / d).abs() < 0.02 / d,
            "pit plan at r {d}: {plan}"
        );
        assert!(profile.abs() < 0.02 / d, "pit profile at r {d}: {profile}");
        let plan = at(&peak, x, y, Surface::Plan);
        assert!(
            (plan + 1.0 / d).abs() < 0.02 / d,
            "peak plan at r {d}: {plan}"
        );
    }
    assert_no_validation_messages(&gpu);
}

/// `scarp render --overlay drainage` and `wetness` tint a valley's floor blue and leave its
/// flanks, where no water gathers, as they are drawn without the overlay; `plan` tints the
/// floor teal (converging) and the flanks hardly.
#[test]
fn drainage_wetness_and_plan_overlays_tint_the_valley_floor() {
    let dir = tempfile::tempdir().unwrap();
    let n = 257u32;
    // A round-bottomed valley along y, falling south: its floor (x near 128) gathers the
    // flanks' water and carries it south.
    let values: Vec<f32> = (0..n * n)
        .map(|i| {
            let (x, y) = ((i % n) as f32, (i / n) as f32);
            0.001 * (x - 128.0) * (x - 128.0) / 128.0 + 0.0005 * (256.0 - y)
        })
        .collect();
    let file = dir.path().join("valley.r32");
    scarp::terrain::export::write_heights(&file, n, n, &values).unwrap();
    let eye = "128,340,300,128,0,128";
    let render = |overlay: Option<&str>| {
        let out = dir
            .path()
            .join(format!("{}.png", overlay.unwrap_or("plain")));
        let mut args = vec![
            "render",
            "--heights",
            file.to_str().unwrap(),
            "--camera",
            eye,
            "--image",
            "400x300",
            "--no-lighting",
            // Page-level nodes: coarse ones (this smooth valley's, from afar) show no tint.
            "--pixel-error",
            "0.01",
            "--max-triangles-per-pixel",
            "0",
            "--out",
            out.to_str().unwrap(),
        ];
        if let Some(o) = overlay {
            args.extend(["--overlay", o]);
        }
        common::scarp_ok(&args);
        image::open(&out).unwrap().into_rgb8()
    };
    let plain = render(None);
    let cam = scarp::render::Camera::look_at(
        glam::Vec3::new(128.0, 340.0, 300.0),
        glam::Vec3::new(128.0, 0.0, 128.0),
    );
    let vs = 257.0 / 4.0; // the default vertical scale: a quarter of the side per height unit
    let pixel = |x: f32, y: f32| {
        let h = values[(y as u32 * n + x as u32) as usize];
        let p = cam.view_proj([400, 300]) * glam::Vec4::new(x, h * vs, y, 1.0);
        let (px, py) = (
            (p.x / p.w * 0.5 + 0.5) * 400.0,
            (p.y / p.w * 0.5 + 0.5) * 300.0,
        );
        (px as u32, py as u32)
    };
    for overlay in ["drainage", "wetness"] {
        let img = render(Some(overlay));
        let blue = |img: &image::RgbImage, (x, y): (u32, u32)| {
            let p = img.get_pixel(x, y).0;
            i32::from(p[2]) - (i32::from(p[0]) + i32::from(p[1])) / 2
        };
        let floor = pixel(128.0, 220.0);
        let flank = pixel(30.0, 220.0);
        assert!(
            blue(&img, floor) > blue(&plain, floor) + 15,
            "{overlay}: the floor {} against {} plain",
            blue(&img, floor),
            blue(&plain, floor)
        );
        assert_eq!(
            img.get_pixel(flank.0, flank.1),
            plain.get_pixel(flank.0, flank.1),
            "{overlay}: the flank"
        );
    }
    // Plan curvature: the floor's contours bend round it (converging, r / |q| = 0.03/m: full
    // teal); the flanks' barely bend (under 0.001/m).
    let img = render(Some("plan"));
    let teal = |img: &image::RgbImage, (x, y): (u32, u32)| {
        let p = img.get_pixel(x, y).0;
        (i32::from(p[1]) + i32::from(p[2])) / 2 - i32::from(p[0])
    };
    let gain = |at| teal(&img, at) - teal(&plain, at);
    let (floor, flank) = (pixel(128.0, 220.0), pixel(30.0, 220.0));
    assert!(gain(floor) > 15, "plan: the floor gained {}", gain(floor));
    assert!(
        gain(flank).abs() * 3 < gain(floor),
        "plan: the flank gained {} (the floor {})",
        gain(flank),
        gain(floor)
    );
    let both = common::scarp(&[
        "render",
        "--heights",
        file.to_str().unwrap(),
        "--overlay",
        "drainage",
        "--overlay",
        "wetness",
        "--out",
        dir.path().join("x.png").to_str().unwrap(),
    ]);
    assert!(!both.status.success());
    assert!(common::stderr(&both).contains("one at a time"));
}

/// The editor's field map (the View panel's *map overlay*): the tint field holds the map of
/// the document as it is, keeps it while a stroke goes on, follows the heights once they have
/// been still for half a second, goes with "none", and names why a document too large for it
/// has none.
/// Whether `got` is `want` within `tol` of its largest magnitude at every texel.
fn close(got: &[f32], want: &[f32], tol: f32) -> Result<(), String> {
    assert_eq!(got.len(), want.len());
    let scale = want.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    assert!(scale > 0.0, "a map of level ground");
    match got
        .iter()
        .zip(want)
        .enumerate()
        .find(|(_, (g, w))| (*g - *w).abs() > tol * scale)
    {
        Some((i, (g, w))) => Err(format!("texel {i}: {g} against {w} (scale {scale})")),
        None => Ok(()),
    }
}

/// A raise dab at (`x`, `y`), applied.
fn dab(d: &mut scarp::document::Document, x: f32, y: f32) {
    use scarp::brush::stroke::{stroke_instances, StrokeSample};
    use scarp::brush::{BrushSettings, BrushType};
    let raise = BrushSettings {
        radius: 40.0,
        strength: 0.2,
        ..BrushSettings::new(BrushType::Raise)
    };
    let at = StrokeSample {
        x,
        y,
        pressure: 1.0,
        t: 0.0,
    };
    d.apply_stroke(&raise, &stroke_instances(&raise, &[at]))
        .unwrap();
    d.pump(None).unwrap();
}

/// The surface maps as derived fields of the page store (issue 39): each page computed on the
/// GPU from the nine height pages around it matches the CPU twin over the whole document (both
/// height formats, across page seams and the document's edges); after an edit only the pages
/// a texel from it are recomputed, and the field then equals, bit for bit, one computed afresh
/// from the new heights; so it does after undo; and the page size changes nothing.
#[test]
fn surface_map_fields_match_the_twin_follow_edits_and_undo_and_ignore_the_page_size() {
    use scarp::maps::field::{twin, SurfaceField, SurfaceMap};
    use scarp::pages::geometry::HeightFormat;
    let gpu = gpu();
    let tables = scarp::noise::NoiseTables::new(1);
    let (w, h) = (300u32, 200u32);
    let heights = common::fbm_terrain(w, h, 3, 40.0, 5);
    let whole = scarp::pages::geometry::Region::whole(w, h).rect();
    let units = Units {
        texel_size: Some(10.0),
        height_unit: Some(400.0),
        ..Default::default()
    };
    let maps = [
        (Surface::Slope, None, 1e-4),
        (Surface::Curvature, None, 1e-4),
        (Surface::Profile, None, 1e-4),
        (Surface::Plan, Some(0.01), 1e-4),
    ];
    let mut by_page_size = Vec::new();
    for (format, page) in [
        (HeightFormat::R32f, 128),
        (HeightFormat::R16, 128),
        (HeightFormat::R32f, 256),
    ] {
        let desc = DocumentDesc {
            format,
            units,
            ..common::doc(w, h, page)
        };
        let mut d = scarp::document::Document::from_heights(&gpu, desc, &heights, &tables).unwrap();
        let pages = desc.page_ids().count();
        let mut fields = Vec::new();
        for (i, &(surface, tint_full, tol)) in maps.iter().enumerate() {
            let map = SurfaceMap { surface, tint_full };
            let name = format!("map {i}");
            let mut f = SurfaceField::new(&gpu, format, &name).unwrap();
            assert_eq!(f.update(&mut d.store, map, None).unwrap(), pages);
            let read = |d: &scarp::document::Document, name: &str| {
                scarp::pages::rects::read(d.store.field(name).unwrap(), whole).unwrap()
            };
            let dense = d.to_dense().unwrap();
            let got = read(&d, &name);
            close(&got, &twin(&dense, &desc, map), tol)
                .unwrap_or_else(|e| panic!("{surface:?} {format:?} against the twin: {e}"));
            // An edit that ends on a page seam and one that begins on one: the pages within a
            // texel of them (across the seam too, whose first or last column reads the edit's),
            // not all of them.
            let seams = [
                scarp::pages::geometry::Rect::new(100, 20, 128, 60),
                scarp::pages::geometry::Rect::new(128, 140, 160, 180),
            ];
            for (k, edit) in seams.into_iter().enumerate() {
                let raised: Vec<f32> = d
                    .base_rect(edit)
                    .unwrap()
                    .iter()
                    .map(|v| v + 0.05)
                    .collect();
                d.write_base_rect(edit, &raised, k > 0).unwrap();
            }
            let n = f.update(&mut d.store, map, None).unwrap();
            let want_n = if page == 128 { 4 } else { 1 };
            assert_eq!(
                n, want_n,
                "pages recomputed after the edit ({pages} in all)"
            );
            let afresh = |d: &mut scarp::document::Document| {
                let mut g = SurfaceField::new(&gpu, format, "afresh").unwrap();
                g.update(&mut d.store, map, None).unwrap();
                read(d, "afresh")
            };
            let after = read(&d, &name);
            assert!(after != got, "{surface:?}: the edit changed nothing");
            assert!(
                after == afresh(&mut d),
                "{surface:?}: not what a fresh map gives"
            );
            assert!(d.undo().unwrap());
            f.update(&mut d.store, map, None).unwrap();
            let undone = read(&d, &name);
            assert!(undone == afresh(&mut d), "{surface:?}: undo not followed");
            if format == HeightFormat::R32f {
                assert!(undone == got, "{surface:?}: undo gave other values");
            }
            fields.push(got);
        }
        if format == HeightFormat::R32f {
            by_page_size.push(fields);
        }
    }
    assert!(
        by_page_size[0] == by_page_size[1],
        "the page size changed a map"
    );
    assert_no_validation_messages(&gpu);
}

/// The View panel's field maps: profile and plan curvature follow a dab at once (the pages
/// near it recomputed on the GPU), a global map (drainage) waits while the heights move and
/// follows them once they are still; a large document gets a surface map but not a global one.
#[test]
fn the_editors_field_maps_follow_the_heights() {
    use scarp::editor::field_map::{FieldMap, FIELD};
    use scarp::render::analysis::Overlay;
    use std::time::{Duration, Instant};
    let gpu = gpu();
    let tables = scarp::noise::NoiseTables::new(1);
    let (w, h) = (300u32, 200u32);
    let desc = common::doc(w, h, 128);
    let heights = common::fbm_terrain(w, h, 3, 60.0, 5);
    let mut d = scarp::document::Document::from_heights(&gpu, desc, &heights, &tables).unwrap();
    let whole = scarp::pages::geometry::Region::whole(w, h).rect();
    let field = |d: &scarp::document::Document| {
        scarp::pages::rects::read(d.store.field(FIELD).unwrap(), whole).unwrap()
    };
    let want = |d: &mut scarp::document::Document, kind| {
        let now = d.to_dense().unwrap();
        let twins = &mut scarp::maps::kernels::Cpu;
        let shaded = scarp::maps::overlay::shades(kind, &now, &desc, twins);
        shaded.unwrap().unwrap().0
    };
    let mut map = FieldMap::default();
    let t0 = Instant::now();
    let got = map.update(Some(Overlay::Plan), &mut d, t0).unwrap();
    assert_eq!(got, Some((FIELD, scarp::render::terrain::Overlay::Uplift)));
    assert_eq!(map.waiting(), 0, "six pages fit a frame");
    let plan = field(&d);
    close(&plan, &want(&mut d, Overlay::Plan), 1e-4).unwrap();
    // A dab: the surface map follows it in the same frame.
    dab(&mut d, 150.0, 100.0);
    map.update(Some(Overlay::Plan), &mut d, t0).unwrap();
    let after = field(&d);
    assert!(after != plan, "the map did not follow the dab");
    close(&after, &want(&mut d, Overlay::Plan), 1e-4).unwrap();
    // A global map at once; it waits while the heights move, then follows them.
    let got = map.update(Some(Overlay::Drainage), &mut d, t0).unwrap();
    assert_eq!(got, Some((FIELD, scarp::render::terrain::Overlay::Water)));
    let drainage = want(&mut d, Overlay::Drainage);
    assert!(field(&d) == drainage);
    dab(&mut d, 60.0, 60.0);
    map.update(Some(Overlay::Drainage), &mut d, t0).unwrap();
    assert!(field(&d) == drainage, "recomputed while the heights moved");
    let later = t0 + Duration::from_secs(1);
    map.update(Some(Overlay::Drainage), &mut d, later).unwrap();
    let moved = want(&mut d, Overlay::Drainage);
    assert!(
        moved != drainage && field(&d) == moved,
        "drainage did not follow the dab"
    );
    // Back to a surface map: the heights as they are now.
    map.update(Some(Overlay::Profile), &mut d, later).unwrap();
    close(&field(&d), &want(&mut d, Overlay::Profile), 1e-4).unwrap();
    assert_eq!(map.update(None, &mut d, later).unwrap(), None);
    // Past 8192² texels: a surface map a few pages a frame; a global map's reason, no map.
    let big = common::doc(16384, 8192, 512);
    let mut large = scarp::document::Document::new(&gpu, big, 0.0, &tables).unwrap();
    dab(&mut large, 4000.0, 2000.0);
    let got = map.update(Some(Overlay::Plan), &mut large, later).unwrap();
    assert!(
        got.is_some() && map.waiting() == 0,
        "the dab's few pages in a frame"
    );
    let near = scarp::pages::geometry::Rect::new(3900, 1900, 4100, 2100);
    let tint = scarp::pages::rects::read(large.store.field(FIELD).unwrap(), near).unwrap();
    assert!(
        tint.iter().any(|&v| (v - 1.0).abs() > 0.1),
        "no tint at the dab"
    );
    // A document of the other height format: the map is made for it.
    let r16 = DocumentDesc {
        format: scarp::pages::geometry::HeightFormat::R16,
        ..desc
    };
    let mut other = scarp::document::Document::from_heights(&gpu, r16, &heights, &tables).unwrap();
    map.update(Some(Overlay::Plan), &mut other, later).unwrap();
    let want_r16 = {
        let now = other.to_dense().unwrap();
        let twins = &mut scarp::maps::kernels::Cpu;
        let shaded = scarp::maps::overlay::shades(Overlay::Plan, &now, &r16, twins);
        shaded.unwrap().unwrap().0
    };
    close(&field(&other), &want_r16, 1e-4).unwrap();
    let e = map
        .update(Some(Overlay::Wetness), &mut large, later)
        .unwrap_err();
    assert!(
        e.contains("16384x8192") && e.contains("scarp export --maps"),
        "{e}"
    );
    assert_no_validation_messages(&gpu);
}

/// `scarp render --overlay erosion` tints a project's erosion (issue 39's wear and deposits):
/// after a journal's erosion run over a hill, its worn flanks turn orange and its deposits teal;
/// the same project without the run renders as plain with the overlay on.
#[test]
fn the_erosion_overlay_tints_where_a_run_wore_and_laid_down() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = |n: &str| d.join(n).to_str().unwrap().to_string();
    common::hill_journals(d, "");
    for (j, out) in [("hill.json", "hill.scarp"), ("eroded.json", "eroded.scarp")] {
        common::scarp_ok(&["apply", "--journal", &p(j), "--out", &p(out)]);
    }
    let render = |project: &str, overlay: bool, out: &str| {
        let mut args = vec![
            "render",
            "--heights",
            project,
            "--image",
            "320x240",
            "--no-lighting",
            "--pixel-error",
            "0.01",
            "--out",
            out,
        ];
        if overlay {
            args.extend(["--overlay", "erosion"]);
        }
        common::scarp_ok(&args);
        image::open(out).unwrap().to_rgb8()
    };
    let hill = p("hill.scarp");
    let eroded = p("eroded.scarp");
    assert!(
        render(&hill, true, &p("h1.png")) == render(&hill, false, &p("h0.png")),
        "no erosion: no tint"
    );
    let plain = render(&eroded, false, &p("e0.png"));
    let tinted = render(&eroded, true, &p("e1.png"));
    let (mut orange, mut teal) = (0, 0);
    for (a, b) in plain.pixels().zip(tinted.pixels()) {
        let gain = |c: usize| i32::from(b.0[c]) - i32::from(a.0[c]);
        if gain(0) > 10 && gain(0) > gain(2) {
            orange += 1;
        }
        if gain(2) > 10 && gain(2) > gain(0) {
            teal += 1;
        }
    }
    assert!(
        orange > 100 && teal > 20,
        "orange {orange}, teal {teal} pixels"
    );
    // A height file holds no erosion: refused by name, before any work.
    let flat = d.join("flat.r32");
    scarp::terrain::export::write_heights(&flat, 64, 64, &vec![0.0; 64 * 64]).unwrap();
    let out = common::scarp(&[
        "render",
        "--heights",
        flat.to_str().unwrap(),
        "--overlay",
        "erosion",
        "--out",
        &p("no.png"),
    ]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && e.contains("--overlay erosion"),
        "{e}"
    );
    assert!(!d.join("no.png").exists());
}

/// D8 drainage on the GPU (pointer doubling, integer atomics) counts exactly what its twin and
/// geology's accumulation count: on fbm ground with pits, on a valley whose river runs the
/// length of the region, on a ramp of one row (a river through every texel) and on one texel;
/// run twice, the same counts (the atomics' order does not show).
#[test]
fn drainage_counts_on_the_gpu_are_the_twins_and_geologys() {
    use scarp::maps::drainage::{areas, twin, Kernels as Drainage};
    let gpu = gpu();
    let k = Drainage::new(&gpu).unwrap();
    let (w, h) = (300u32, 200u32);
    let fbm: Vec<f32> = common::fbm_terrain(w, h, 5, 40.0, 6)
        .iter()
        .map(|v| v * 300.0)
        .collect();
    // A valley falling along x to the left edge, its sides falling to it: one river drains
    // nearly all of it, 299 texels long.
    let valley: Vec<f32> = (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as f32, (i / w) as f32);
            x * 0.5 + (y - 100.0).abs() * 2.0
        })
        .collect();
    // A ramp of one row: its river is as long as a river can be (256 steps, so one round
    // fewer would leave the last texel out).
    let row: Vec<f32> = (0..257).map(|x| x as f32).collect();
    for (name, z, size, tau) in [
        ("fbm", fbm, [w, h], 4.0f32),
        ("valley", valley, [w, h], 1.0),
        ("row", row, [257, 1], 2.0),
        ("texel", vec![3.0], [1, 1], 1.0),
        // A texel area that is no power of two: τ² is rounded to f32 as geology adds it.
        (
            "fbm on 0.3 m",
            common::fbm_terrain(w, h, 9, 40.0, 6),
            [w, h],
            0.3,
        ),
    ] {
        let on_gpu = k.counts(&gpu, &z, size, tau, None).unwrap();
        let again = k.counts(&gpu, &z, size, tau, None).unwrap();
        let want = twin(&z, size, tau);
        assert!(
            on_gpu == want,
            "{name}: the GPU's counts differ from the twin's"
        );
        assert!(again == on_gpu, "{name}: a second run differs");
        let push = scarp::maps::drainage::push(size, tau);
        let exact = scarp::geology::cpu::d8_area(&z, &push);
        assert_eq!(areas(&on_gpu, push.a0), exact, "{name}");
        if name == "valley" {
            let most = *on_gpu.iter().max().unwrap();
            assert!(most > w * h * 9 / 10, "one river drains the valley: {most}");
        }
    }
    assert_no_validation_messages(&gpu);
}

/// `scarp render --overlay drainage` of a document past 2^28 texels is refused in one line
/// naming why (the whole document would be read and mapped at once), and writes no image.
#[test]
fn a_global_overlay_of_a_document_too_large_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let p = |n: &str| d.join(n).to_str().unwrap().to_string();
    let journal = r#"{"version": 2, "document": {"width": 16400, "height": 16400,
        "page_size": 512, "height_min": 0.0, "height_max": 1.0, "initial": {"flat": 0.0}},
      "steps": []}"#;
    std::fs::write(d.join("big.json"), journal).unwrap();
    common::scarp_ok(&[
        "apply",
        "--journal",
        &p("big.json"),
        "--out",
        &p("big.scarp"),
    ]);
    let out = common::scarp(&[
        "render",
        "--heights",
        &p("big.scarp"),
        "--overlay",
        "wetness",
        "--image",
        "64x64",
        "--out",
        &p("x.png"),
    ]);
    let e = common::stderr(&out);
    let line = e.lines().find(|l| l.contains("error")).unwrap_or_default();
    assert!(
        !out.status.success() && line.contains("--overlay wetness: a 16400x16400 document is past"),
        "{e}"
    );
    assert!(!d.join("x.png").exists(), "no image");
}

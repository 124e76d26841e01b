//! The lighting field (render::lighting): GPU against the CPU twin, incremental refreshes after
//! an edit against a full recomputation, and a cone's shadow length.

mod common;

use common::{assert_no_validation_messages, doc, gpu};
use scarp::brush::stroke::{stroke_instances, StrokeSample};
use scarp::brush::{BrushSettings, BrushType};
use scarp::document::Document;
use scarp::noise::NoiseTables;
use scarp::pages::coarse;
use scarp::pages::geometry::{DocumentDesc, HeightFormat, PageId};
use scarp::render::lighting::{
    affected_by, cpu_far_lighting, cpu_lighting, unpack, LightSettings, Lighting, Sun, FIELD,
};
use std::collections::BTreeSet;

/// Ridges and bumps in texel units (slopes in every direction, steep enough to shadow).
fn relief(w: u32, h: u32) -> Vec<f32> {
    (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as f32, (i / w) as f32);
            let bump = |cx: f32, cy: f32, r: f32, a: f32| {
                a * (-((x - cx).powi(2) + (y - cy).powi(2)) / (r * r)).exp()
            };
            bump(180.0, 150.0, 60.0, 90.0)
                + bump(420.0, 260.0, 40.0, 60.0)
                + 12.0 * (x * 0.045).sin() * (y * 0.06).cos()
                + 4.0 * (x * 0.21 + y * 0.13).sin()
        })
        .collect()
}

/// Mountains at the far level's scale (a 64² block spans a fraction of a slope): big bumps and
/// long ridges, hundreds of texels across.
fn ranges(w: u32, h: u32) -> Vec<f32> {
    (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as f32, (i / w) as f32);
            let bump = |cx: f32, cy: f32, r: f32, a: f32| {
                a * (-((x - cx).powi(2) + (y - cy).powi(2)) / (r * r)).exp()
            };
            bump(500.0, 400.0, 260.0, 420.0)
                + bump(1400.0, 900.0, 180.0, 300.0)
                + 90.0 * (x * 0.011).sin() * (y * 0.008).cos()
        })
        .collect()
}

/// The lighting field's coarse level as the shading pass reads it (each block's fourth value),
/// brought up to date as the renderer does before a frame.
fn far_of(d: &mut Document) -> Vec<f32> {
    let f = d.store.field_mut(FIELD).expect("lit");
    f.refresh_coarse().unwrap();
    let level = f.coarse_level().expect("a coarse level").read().unwrap();
    level.iter().map(|t| t[3]).collect()
}

/// The ridges and bumps of [`relief`] over a 1024² document of 128² pages.
fn relief_document(gpu: &std::sync::Arc<scarp::gpu::Gpu>) -> (DocumentDesc, Document) {
    let d = doc(1024, 1024, 128);
    let heights = relief(d.width, d.height);
    let terrain = Document::from_heights(gpu, d, &heights, &NoiseTables::new(2009)).unwrap();
    (d, terrain)
}

fn light_of(d: &Document) -> Vec<f32> {
    d.store.field(FIELD).expect("lit").to_dense().unwrap()
}

fn settings(azimuth: f32, elevation: f32) -> LightSettings {
    LightSettings {
        sun: Sun { azimuth, elevation },
        vertical_scale: 1.0,
    }
}

/// Largest difference of sun visibility and of occlusion between two packed fields, and how
/// many texels differ at all.
fn compare(a: &[f32], b: &[f32]) -> (f32, f32, usize) {
    let (mut ds, mut da, mut n) = (0.0f32, 0.0f32, 0);
    for (&x, &y) in a.iter().zip(b) {
        let ((sx, ax), (sy, ay)) = (unpack(x), unpack(y));
        ds = ds.max((sx - sy).abs());
        da = da.max((ax - ay).abs());
        n += usize::from(x != y);
    }
    (ds, da, n)
}

/// The GPU field equals the twin to one level of the packing (1/1023) in each quantity (the
/// GPU divides within 2.5 ulp), on all but a few texels exactly; the scene has full sun, full
/// shadow and occlusion. Both height formats (the twin gets the r16 document's decoded
/// heights).
#[test]
fn lighting_matches_the_cpu_twin() {
    let gpu = gpu();
    for (sun, page, format) in [
        (settings(250.0, 20.0), 128, HeightFormat::R32f),
        (settings(45.0, 35.0), 256, HeightFormat::R32f),
        (settings(300.0, 25.0), 128, HeightFormat::R16),
    ] {
        let mut d = doc(600, 400, page);
        if format == HeightFormat::R16 {
            (d.format, d.height_min, d.height_max) = (format, -40.0, 130.0);
        }
        let mut terrain =
            Document::from_heights(&gpu, d, &relief(d.width, d.height), &NoiseTables::new(2009))
                .unwrap();
        let heights = terrain.store.height().to_dense().unwrap();
        let mut l = Lighting::new(&gpu, d.format).unwrap();
        let stats = l.update(&mut terrain.store, &sun, None).unwrap();
        assert_eq!(stats.pending, 0);
        assert_eq!(stats.pages, (d.pages_x() * d.pages_y()) as usize);
        let gpu_field = light_of(&terrain);
        let cpu_field = cpu_lighting(&d, &heights, &sun);
        let (ds, da, n) = compare(&gpu_field, &cpu_field);
        let tol = 1.0 / 1023.0 + 1e-6;
        assert!(ds <= tol && da <= tol, "sun {ds}, occlusion {da} apart");
        assert!(n * 1000 < gpu_field.len(), "{n} texels differ");
        let suns: Vec<f32> = cpu_field.iter().map(|&v| unpack(v).0).collect();
        let aos: Vec<f32> = cpu_field.iter().map(|&v| unpack(v).1).collect();
        let shadowed = suns.iter().filter(|&&s| s == 0.0).count();
        let lit = suns.iter().filter(|&&s| s == 1.0).count();
        assert!(
            shadowed > 1000 && lit > 1000,
            "{shadowed} shadowed, {lit} lit"
        );
        assert!(aos.iter().any(|&a| a < 0.8), "no occlusion anywhere");
    }
    assert_no_validation_messages(&gpu);
}

fn raise(terrain: &mut Document, x0: f32, y0: f32, x1: f32, y1: f32) {
    raise_with(terrain, 30.0, 40.0, [x0, y0], [x1, y1]);
}

/// A raise stroke of `radius` and `strength` from `a` to `b`, six samples.
fn raise_with(terrain: &mut Document, radius: f32, strength: f32, a: [f32; 2], b: [f32; 2]) {
    let [x0, y0] = a;
    let [x1, y1] = b;
    let mut b = BrushSettings::new(BrushType::Raise);
    b.radius = radius;
    b.strength = strength;
    let samples: Vec<StrokeSample> = (0..6)
        .map(|i| StrokeSample {
            x: x0 + (x1 - x0) * i as f32 / 5.0,
            y: y0 + (y1 - y0) * i as f32 / 5.0,
            pressure: 1.0,
            t: 0.0,
        })
        .collect();
    terrain
        .apply_stroke(&b, &stroke_instances(&b, &samples))
        .unwrap();
}

fn page_values(d: &DocumentDesc, field: &[f32], id: PageId) -> Vec<f32> {
    let r = d.page_rect(id);
    let mut v = Vec::new();
    for y in r.y0..r.y1 {
        for x in r.x0..r.x1 {
            v.push(field[y as usize * d.width as usize + x as usize]);
        }
    }
    v
}

/// After a stroke and after its undo, the refreshed field is bit-identical to lighting every
/// page afresh, and only pages whose march or horizons reach the stroke's pages changed. The
/// stroke's refresh runs under a budget of nothing: the texels near it at once, then one strip
/// page per update.
#[test]
fn lighting_follows_edits_like_a_full_recomputation() {
    let gpu = gpu();
    // 8 x 16 pages of 128 (the stroke's strip runs to the northern edge).
    let d = doc(1024, 2048, 128);
    let sun = settings(200.0, 25.0);
    let heights: Vec<f32> = relief(d.width, d.height);
    let mut terrain = Document::from_heights(&gpu, d, &heights, &NoiseTables::new(2009)).unwrap();
    let mut l = Lighting::new(&gpu, d.format).unwrap();
    l.update(&mut terrain.store, &sun, None).unwrap();
    let before = light_of(&terrain);
    raise(&mut terrain, 600.0, 1500.0, 700.0, 1560.0);
    let stroke_pages: Vec<PageId> = d
        .page_ids()
        .filter(|&id| {
            let r = d.page_rect(id);
            r.x1 > 540 && r.x0 < 760 && r.y1 > 1440 && r.y0 < 1620
        })
        .collect();
    for step in 0..2 {
        if step == 1 {
            assert!(terrain.undo().unwrap());
        }
        let stats = l.update(&mut terrain.store, &sun, Some(0.0)).unwrap();
        assert!(stats.near_texels > 0 && stats.pages == 0, "{stats:?}");
        let mut strip_pages = 0;
        for _ in 0..d.pages_x() * d.pages_y() {
            let s = l.update(&mut terrain.store, &sun, Some(0.0)).unwrap();
            assert!(s.near_texels == 0 && s.pages == 1, "{s:?}");
            strip_pages += 1;
            if s.pending == 0 {
                break;
            }
        }
        assert_eq!(l.pending(), 0);
        assert!(strip_pages > 1 && strip_pages < (d.pages_x() * d.pages_y()) as usize);
        let incremental = light_of(&terrain);
        let mut fresh = Lighting::new(&gpu, d.format).unwrap();
        fresh.update(&mut terrain.store, &sun, None).unwrap();
        let full = light_of(&terrain);
        assert!(
            incremental == full,
            "step {step}: incremental differs from full"
        );
        let reach: BTreeSet<PageId> = stroke_pages
            .iter()
            .flat_map(|&id| affected_by(&d, &sun.sun, id))
            .collect();
        let mut changed = 0;
        for id in d.page_ids() {
            let same = page_values(&d, &before, id) == page_values(&d, &full, id);
            if !same {
                changed += 1;
                assert!(
                    reach.contains(&id),
                    "step {step}: page {id:?} changed out of reach"
                );
            }
        }
        if step == 0 {
            assert!(changed > 0, "the stroke changed no lighting");
        } else {
            assert_eq!(changed, 0, "the undo restores the lighting");
        }
        // Let the incremental updater carry on from the full field.
        l = fresh;
    }
    assert_no_validation_messages(&gpu);
}

/// Issue 40's lighting that follows the screen, in its order: with the pages the renderer draws
/// at page level named ([`Lighting::want_first`]), updates that light one page each light those
/// first (the far corner of the document here, which the key order reaches last), say how many
/// of them wait, and end with the field a full update gives, bit for bit.
#[test]
fn the_pages_in_view_are_lit_first_and_the_end_is_the_same() {
    let gpu = gpu();
    let d = doc(1024, 1024, 128);
    let sun = settings(200.0, 25.0);
    let heights = relief(d.width, d.height);
    let mut terrain = Document::from_heights(&gpu, d, &heights, &NoiseTables::new(2009)).unwrap();
    let view = [PageId { x: 7, y: 7 }, PageId { x: 6, y: 7 }];
    let mut l = Lighting::new(&gpu, d.format).unwrap();
    l.want_first(&view);
    let lit = |t: &Document, id: PageId| {
        t.store
            .field(FIELD)
            .is_some_and(|f| f.versions().page(id).is_some())
    };
    let first = l.update(&mut terrain.store, &sun, Some(0.0)).unwrap();
    assert_eq!((first.pages, first.pending_in_view), (1, 1), "{first:?}");
    assert!(lit(&terrain, view[0]) && !lit(&terrain, view[1]));
    let second = l.update(&mut terrain.store, &sun, Some(0.0)).unwrap();
    assert_eq!((second.pages, second.pending_in_view), (1, 0), "{second:?}");
    assert!(lit(&terrain, view[1]) && !lit(&terrain, PageId { x: 0, y: 0 }));
    let mut updates = 2;
    while l.pending() > 0 {
        l.update(&mut terrain.store, &sun, Some(0.0)).unwrap();
        updates += 1;
        assert!(updates <= 64, "one page an update");
    }
    let ordered = light_of(&terrain);
    let mut fresh = Lighting::new(&gpu, d.format).unwrap();
    fresh.update(&mut terrain.store, &sun, None).unwrap();
    assert!(
        ordered == light_of(&terrain),
        "the order changed the lighting"
    );
    assert_no_validation_messages(&gpu);
}

/// The far level (the lighting of the surface coarse nodes draw, one texel per 64² block) equals
/// its CPU twin to one level of the packing, on nearly every texel exactly, in both height
/// formats; it has sun, shadow and occlusion; after a stroke, the update relights only the
/// far texels the stroke can reach, and the level equals the twin of the new heights.
#[test]
fn the_far_level_matches_its_cpu_twin_and_follows_edits() {
    let gpu = gpu();
    for (sun, format) in [
        (settings(250.0, 20.0), HeightFormat::R32f),
        (settings(40.0, 12.0), HeightFormat::R16),
    ] {
        let mut d = doc(2048, 1536, 256);
        if format == HeightFormat::R16 {
            (d.format, d.height_min, d.height_max) = (format, -100.0, 700.0);
        }
        let mut terrain =
            Document::from_heights(&gpu, d, &ranges(d.width, d.height), &NoiseTables::new(2009))
                .unwrap();
        let mut l = Lighting::new(&gpu, d.format).unwrap();
        // Following a view that draws nothing at page level: the far level alone.
        l.follow_view(true);
        let stats = l.update(&mut terrain.store, &sun, None).unwrap();
        let [cw, ch] = coarse::size_of(&d);
        let blocks = (cw * ch) as usize;
        assert_eq!(
            (stats.pages, stats.far_texels),
            (0, blocks as u64),
            "{stats:?}"
        );
        assert_eq!(l.pending(), 0);
        let lit_pages = terrain
            .store
            .field(FIELD)
            .unwrap()
            .versions()
            .by_page()
            .count();
        assert_eq!(lit_pages, 0, "no page is lit at full resolution");
        let tol = 1.0 / 1023.0 + 1e-6;
        let check = |terrain: &mut Document, what: &str| {
            let heights = terrain.store.height().to_dense().unwrap();
            let level = coarse::dense_level(&d, &heights);
            let cpu = cpu_far_lighting(&d, &level, &sun);
            let gpu_far = far_of(terrain);
            let (ds, da, n) = compare(&gpu_far, &cpu);
            assert!(
                ds <= tol && da <= tol,
                "{what}: sun {ds}, occlusion {da} apart"
            );
            assert!(n * 100 <= blocks, "{what}: {n} of {blocks} texels differ");
            gpu_far
        };
        let before = check(&mut terrain, "opened");
        let suns: Vec<f32> = before.iter().map(|&v| unpack(v).0).collect();
        let shadowed = suns.iter().filter(|&&s| s < 0.5).count();
        let sunny = suns.iter().filter(|&&s| s == 1.0).count();
        assert!(
            shadowed >= 20 && sunny >= 100,
            "{shadowed} shadowed, {sunny} in the sun"
        );
        assert!(
            before.iter().any(|&v| unpack(v).1 < 0.95),
            "no occlusion anywhere"
        );
        // A wide stroke across the big bump.
        raise_with(&mut terrain, 120.0, 150.0, [300.0, 700.0], [700.0, 700.0]);
        let stats = l.update(&mut terrain.store, &sun, None).unwrap();
        assert!(
            stats.far_texels > 0 && stats.far_texels < blocks as u64,
            "the stroke relit {} far texels of {blocks}",
            stats.far_texels
        );
        let lit_pages = terrain
            .store
            .field(FIELD)
            .unwrap()
            .versions()
            .by_page()
            .count();
        assert_eq!(lit_pages, 0, "a page drawn coarse was lit near the stroke");
        let after = check(&mut terrain, "after a stroke");
        assert!(after != before, "the stroke changed nothing far");
    }
    assert_no_validation_messages(&gpu);
}

/// Following the view ([`Lighting::follow_view`]): only the pages the renderer draws at page
/// level are lit, to the values lighting the whole document gives them, bit for bit; the
/// lighting field's coarse level holds their corners where they are lit and the far level
/// elsewhere; pages leaving the view are kept within the bytes allowed and beyond that
/// dropped, their blocks back to the far level; a new sun relights only the view.
#[test]
fn following_the_view_lights_its_pages_alone_and_the_far_level_elsewhere() {
    let gpu = gpu();
    let (d, mut terrain) = relief_document(&gpu);
    let sun = settings(200.0, 25.0);
    let mut whole = Lighting::new(&gpu, d.format).unwrap();
    whole.update(&mut terrain.store, &sun, None).unwrap();
    let full = light_of(&terrain);
    terrain.store.remove_field(FIELD);

    let mut l = Lighting::new(&gpu, d.format).unwrap();
    l.follow_view(true);
    let first = l.update(&mut terrain.store, &sun, None).unwrap();
    assert_eq!(first.pages, 0, "{first:?}");
    let far = far_of(&mut terrain);
    let view = [PageId { x: 2, y: 3 }, PageId { x: 3, y: 3 }];
    l.want_first(&view);
    let s = l.update(&mut terrain.store, &sun, None).unwrap();
    assert_eq!((s.pages, s.pending, s.pending_in_view), (2, 0, 0), "{s:?}");
    let held = |t: &Document| -> BTreeSet<PageId> {
        t.store
            .field(FIELD)
            .unwrap()
            .versions()
            .by_page()
            .map(|(id, _)| id)
            .collect()
    };
    assert_eq!(held(&terrain), view.into_iter().collect());
    let lit = light_of(&terrain);
    for id in view {
        assert!(
            page_values(&d, &lit, id) == page_values(&d, &full, id),
            "page {id:?} differs from the whole document's lighting"
        );
    }
    // The coarse level: corners of the lit pages, the far level elsewhere.
    let [cw, _] = coarse::size_of(&d);
    let corners = |terrain: &mut Document, field: &[f32]| {
        let levels = far_of(terrain);
        let lit = held(terrain);
        for (i, &v) in levels.iter().enumerate() {
            let (bx, by) = (i as u32 % cw, i as u32 / cw);
            let (x, y) = (bx * 64, by * 64);
            let page = PageId {
                x: x / d.page_size,
                y: y / d.page_size,
            };
            let want = match lit.contains(&page) {
                true => field[(y * d.width + x) as usize],
                false => far[i],
            };
            assert_eq!(v, want, "block ({bx}, {by}) of page {page:?}");
        }
    };
    corners(&mut terrain, &full);
    // The view moves on: with room for one page beyond it, the page wanted longest ago goes.
    l.keep_beyond_view(128 * 128 * 4 * 2); // one page: a front and a back image
    l.want_first(&[PageId { x: 3, y: 3 }, PageId { x: 4, y: 3 }]);
    l.update(&mut terrain.store, &sun, None).unwrap();
    l.want_first(&[PageId { x: 5, y: 5 }]);
    let s = l.update(&mut terrain.store, &sun, None).unwrap();
    // The dropped pages' blocks read the far level again, relit in the update that drops them.
    assert!(s.far_texels > 0, "{s:?}");
    corners(&mut terrain, &full);
    let kept: BTreeSet<PageId> = [(3, 3), (4, 3), (5, 5)]
        .map(|(x, y)| PageId { x, y })
        .into_iter()
        .collect();
    assert_eq!(held(&terrain).len(), 2, "{:?}", held(&terrain));
    assert!(held(&terrain).is_subset(&kept) && held(&terrain).contains(&PageId { x: 5, y: 5 }));
    // A new sun: the view relit, every other page dropped.
    let low = settings(120.0, 15.0);
    let s = l.update(&mut terrain.store, &low, None).unwrap();
    assert_eq!(s.pages, 1, "{s:?}");
    assert_eq!(
        held(&terrain),
        [PageId { x: 5, y: 5 }].into_iter().collect()
    );
    // A page kept beyond the view that a stroke makes stale is dropped, not relit.
    l.keep_beyond_view(u64::MAX);
    l.want_first(&[PageId { x: 2, y: 2 }]);
    l.update(&mut terrain.store, &low, None).unwrap();
    l.want_first(&[PageId { x: 5, y: 5 }]);
    l.update(&mut terrain.store, &low, None).unwrap();
    assert_eq!(held(&terrain).len(), 2);
    raise(&mut terrain, 300.0, 300.0, 340.0, 340.0);
    let s = l.update(&mut terrain.store, &low, None).unwrap();
    assert_eq!((s.pages, s.pending), (0, 0), "{s:?}");
    assert_eq!(
        held(&terrain),
        [PageId { x: 5, y: 5 }].into_iter().collect()
    );
    assert_no_validation_messages(&gpu);
}

/// Following the view, a page drawn at page level that a stroke reaches before it was ever lit
/// is lit whole (not only near the stroke, the rest reading as fully lit), to the lighting of
/// the whole document after the stroke, bit for bit.
#[test]
fn a_page_in_view_painted_before_it_is_lit_is_lit_whole() {
    let gpu = gpu();
    let (d, mut terrain) = relief_document(&gpu);
    let sun = settings(200.0, 25.0);
    let mut l = Lighting::new(&gpu, d.format).unwrap();
    l.follow_view(true);
    l.update(&mut terrain.store, &sun, Some(0.0)).unwrap();
    let page = PageId { x: 3, y: 3 };
    l.want_first(&[page]);
    raise(&mut terrain, 440.0, 440.0, 470.0, 470.0);
    let s = l.update(&mut terrain.store, &sun, Some(0.0)).unwrap();
    assert_eq!((s.pages, s.pending), (1, 0), "{s:?}");
    let followed = page_values(&d, &light_of(&terrain), page);
    terrain.store.remove_field(FIELD);
    let mut whole = Lighting::new(&gpu, d.format).unwrap();
    whole.update(&mut terrain.store, &sun, None).unwrap();
    assert!(
        followed == page_values(&d, &light_of(&terrain), page),
        "the page differs from the whole document's lighting"
    );
    assert_no_validation_messages(&gpu);
}

/// A cone steeper than the sun on flat ground, lit from the east at 30°: its shadow ends where
/// the line from the apex at the sun's elevation meets the ground, within two texels (the GPU
/// and the twin alike).
#[test]
fn a_cone_casts_a_shadow_of_its_length() {
    let gpu = gpu();
    let d = doc(512, 256, 128);
    let (cx, cy, height, radius) = (300.0f32, 128.0f32, 40.0f32, 20.0f32);
    let heights: Vec<f32> = (0..d.width * d.height)
        .map(|i| {
            let (x, y) = ((i % d.width) as f32, (i / d.width) as f32);
            let r = ((x - cx).powi(2) + (y - cy).powi(2)).sqrt();
            (height * (1.0 - r / radius)).max(0.0)
        })
        .collect();
    let sun = settings(90.0, 30.0);
    let mut terrain = Document::from_heights(&gpu, d, &heights, &NoiseTables::new(2009)).unwrap();
    let mut l = Lighting::new(&gpu, d.format).unwrap();
    l.update(&mut terrain.store, &sun, None).unwrap();
    let expected = cx - height / 30f32.to_radians().tan();
    for (name, field) in [
        ("gpu", light_of(&terrain)),
        ("cpu", cpu_lighting(&d, &heights, &sun)),
    ] {
        let row = cy as usize * d.width as usize;
        // West from the cone's foot: the first texel back in the sun.
        let tip = (0..(cx - radius) as usize)
            .rev()
            .find(|&x| unpack(field[row + x]).0 >= 0.5)
            .expect("the shadow ends") as f32;
        assert!(
            (tip - expected).abs() <= 2.0,
            "{name}: shadow ends at {tip}, expected {expected:.1}"
        );
        // East of the cone (toward the sun) the ground is lit; far west too.
        assert_eq!(unpack(field[row + (cx + radius + 5.0) as usize]).0, 1.0);
        assert_eq!(unpack(field[row + 10]).0, 1.0);
    }
    assert_no_validation_messages(&gpu);
}

#[test]
fn sun_parses_azimuth_and_elevation() {
    let s: Sun = "370,45".parse().unwrap();
    assert_eq!((s.azimuth, s.elevation), (10.0, 45.0));
    for bad in ["45", "a,30", "10,0", "10,95", "1,2,3"] {
        assert!(bad.parse::<Sun>().is_err(), "{bad} accepted");
    }
    // East is +x, north is -y (rows).
    let [x, y] = Sun {
        azimuth: 90.0,
        elevation: 30.0,
    }
    .dir();
    assert!((x - 1.0).abs() < 1e-6 && y.abs() < 1e-6);
    let [x, y] = Sun::default().dir();
    assert!(x < 0.0 && y > 0.0, "default sun in the south-west");
}

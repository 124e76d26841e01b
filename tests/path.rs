//! Paths (src/brush/path.rs, docs/journal.md "Paths"): the GPU kernel against its CPU twin for
//! every mode and cross-section, the same result whatever the page size, one undo step restored
//! bit for bit, journal steps that replay exactly, roads no steeper than their grade, and bad
//! steps named. Validation on; any message fails.

mod common;

use common::{assert_no_validation_messages, gpu, max_diff};
use scarp::brush::cpu::CpuTerrain;
use scarp::brush::path::{PathMode, PathSpec, Profile};
use scarp::document::Document;
use scarp::journal::{journal_json, Initial, Journal, Step};
use scarp::noise::{CpuTables, NoiseTables};
use std::path::Path;
use std::sync::Arc;

/// A w x h fBm terrain, heights about 0..1.
fn terrain(w: u32, h: u32) -> Vec<f32> {
    common::fbm_terrain(w, h, 3, 70.0, 5)
}

/// A winding path across a 300 x 260 document, over the corners of 128-texel pages.
fn winding(mode: PathMode, profile: Profile) -> PathSpec {
    PathSpec {
        points: vec![[20.0, 40.0], [110.0, 150.0], [190.0, 90.0], [285.0, 230.0]],
        width: 18.0,
        falloff: 12.0,
        profile,
        mode,
        depth: 0.08,
        max_grade: 1.5,
        water: 0.0,
    }
}

const W: u32 = 300;
const H: u32 = 260;

#[test]
fn every_mode_and_cross_section_matches_the_cpu_twin_whatever_the_page_size() {
    let gpu = gpu();
    let heights = terrain(W, H);
    let tables = NoiseTables::new(1);
    for mode in PathMode::ALL {
        for profile in Profile::ALL {
            let spec = winding(mode, profile);
            let mut results = Vec::new();
            for page in [128, 256] {
                let mut d =
                    Document::from_heights(&gpu, common::doc(W, H, page), &heights, &tables)
                        .unwrap();
                scarp::edit::path::apply(&mut d, &mut Default::default(), &spec).unwrap();
                results.push(d.to_dense().unwrap());
            }
            assert!(
                results[0] == results[1],
                "{mode:?} {profile:?}: page size changed it"
            );
            let mut twin = CpuTerrain::from_heights(
                common::doc(W, H, 128),
                &heights,
                Arc::new(CpuTables::new(&tables)),
            );
            twin.apply_path(&spec);
            let diff = max_diff(&results[0], &twin.to_dense());
            assert!(
                diff < 1e-5,
                "{mode:?} {profile:?}: GPU and twin differ by {diff}"
            );
            let changed = results[0]
                .iter()
                .zip(&heights)
                .filter(|(a, b)| a != b)
                .count();
            assert!(
                changed > 2000,
                "{mode:?} {profile:?}: {changed} texels changed"
            );
            // Carving never raises, raising never lowers.
            let (up, down) = results[0]
                .iter()
                .zip(&heights)
                .fold((0, 0), |(u, d), (a, b)| {
                    (u + usize::from(a > b), d + usize::from(a < b))
                });
            match mode {
                PathMode::Carve => assert_eq!(up, 0, "{profile:?}"),
                PathMode::Raise => assert_eq!(down, 0, "{profile:?}"),
                PathMode::Grade => assert!(up > 0 && down > 0, "a grade cuts and fills"),
            }
        }
    }
    assert_no_validation_messages(&gpu);
}

#[test]
fn a_path_is_one_undo_step_and_its_journal_step_replays_bit_for_bit() {
    let gpu = gpu();
    let heights = terrain(W, H);
    let tables = NoiseTables::new(1);
    let desc = common::doc(W, H, 128);
    let spec = winding(PathMode::Grade, Profile::U);
    let mut d = Document::from_heights(&gpu, desc, &heights, &tables).unwrap();
    let before = d.to_dense().unwrap();
    scarp::edit::path::apply(&mut d, &mut Default::default(), &spec).unwrap();
    let after = d.to_dense().unwrap();
    assert!(d.undo().unwrap());
    assert!(
        d.to_dense().unwrap() == before,
        "undo restores the heights bit for bit"
    );
    assert!(d.redo().unwrap());
    assert!(d.to_dense().unwrap() == after, "redo brings the path back");

    // Written as a journal step and read back: the same path, the same heights.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("h.r32");
    scarp::terrain::export::write_heights(&file, W, H, &heights).unwrap();
    let text = journal_json(&desc, &Initial::File(file), &[Step::Path(spec.clone())]).unwrap();
    assert!(text.contains("\"path\""), "{text}");
    let journal = Journal::parse(&text, Path::new(".")).unwrap();
    let mut replayed = Document::from_heights(&gpu, desc, &heights, &tables).unwrap();
    let mut tools = scarp::edit::Tools::default();
    let target = &mut scarp::edit::Target::new(&mut replayed, &mut tools);
    journal.replay(target, |_, _| {}).unwrap();
    assert!(
        replayed.to_dense().unwrap() == after,
        "the journal step replays bit for bit"
    );
    // The CPU twin replays it too, and undoes it.
    let mut twin = CpuTerrain::from_heights(desc, &heights, Arc::new(CpuTables::new(&tables)));
    journal.replay(&mut twin, |_, _| {}).unwrap();
    assert!(max_diff(&twin.to_dense(), &after) < 1e-5);
    assert!(twin.undo());
    assert!(twin.to_dense() == heights);

    // A layer selected: refused with the reason, nothing changes.
    common::add_and_select_layer(&mut d, "l");
    let e = scarp::edit::path::apply(&mut d, &mut Default::default(), &spec)
        .unwrap_err()
        .to_string();
    assert!(e.contains("select"), "{e}");
    assert_no_validation_messages(&gpu);
}

/// A road graded along a slope four times steeper than it may climb: along its centre line it
/// climbs no faster than its max grade, and the ground beyond its reach is untouched.
#[test]
fn a_graded_road_climbs_no_faster_than_its_max_grade() {
    let gpu = gpu();
    let (w, h) = (400u32, 128u32);
    let heights: Vec<f32> = (0..w * h).map(|i| 0.008 * (i % w) as f32).collect();
    let spec = PathSpec {
        points: vec![[10.0, 64.0], [200.0, 64.0], [390.0, 64.0]],
        width: 16.0,
        falloff: 10.0,
        profile: Profile::Flat,
        mode: PathMode::Grade,
        depth: 0.0,
        max_grade: 2.0,
        water: 0.0,
    };
    let mut d =
        Document::from_heights(&gpu, common::doc(w, h, 128), &heights, &NoiseTables::new(1))
            .unwrap();
    scarp::edit::path::apply(&mut d, &mut Default::default(), &spec).unwrap();
    let got = d.to_dense().unwrap();
    let row = |y: u32| &got[(y * w) as usize..((y + 1) * w) as usize];
    for y in [60, 64, 68] {
        let r = row(y);
        for x in 12..388 {
            let rise = r[x + 1] - r[x];
            assert!(
                (-1e-5..=0.002 + 1e-5).contains(&rise),
                "row {y}, x {x}: rises {rise} in a texel"
            );
        }
    }
    // Across the road, level (a flat cross-section).
    for x in [50, 200, 350] {
        assert!((row(58)[x] - row(70)[x]).abs() < 1e-5);
    }
    for y in [0, 30, 100, 127] {
        assert!(row(y) == &heights[(y * w) as usize..((y + 1) * w) as usize]);
    }
    assert_no_validation_messages(&gpu);
}

#[test]
fn bad_path_steps_are_named() {
    let base = r#"{"version": 2, "document": {"width": 64, "height": 64},
        "steps": [{"path": {"points": [[4, 4], [60, 40]], FIELDS}}]}"#;
    for (fields, want) in [
        (
            r#""mode": "dig""#,
            "steps[0]: path.mode: unknown mode 'dig'",
        ),
        (
            r#""profile": "w""#,
            "steps[0]: path.profile: unknown profile 'w'",
        ),
        (r#""width": -2"#, "steps[0]: path.width must be between 1"),
        (r#""depth": 1e9"#, "steps[0]: path.depth must be between 0"),
        (r#""wdth": 3"#, "unknown field `wdth`"),
        (
            r#""depth": 0.02, "water": 0.05"#,
            "steps[0]: path.water must be between 0 and 0.02",
        ),
        (
            r#""mode": "grade", "water": 0.01"#,
            "steps[0]: path.water: only a carved channel holds water (mode grade",
        ),
    ] {
        let text = base.replace("FIELDS", fields);
        let e = Journal::parse(&text, Path::new("."))
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{fields}: {e}");
    }
    let outside = base.replace("[60, 40]", "[90, 40]").replace(", FIELDS", "");
    let e = Journal::parse(&outside, Path::new("."))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("path.points[1]: [90, 40] is outside the 64x64 document"),
        "{e}"
    );
}

/// A carved river holding water: the surface stands `water` over the bed along the centre line,
/// no higher than the banks, and nowhere beyond the path's reach; the water is in the same undo
/// step as the carve, replays from its journal step, and is saved with the project.
#[test]
fn a_river_holds_water_in_its_channel_in_one_undo_step_and_is_saved() {
    use scarp::pages::geometry::Region;
    use scarp::rivers::NO_WATER;
    let gpu = gpu();
    let heights = terrain(W, H);
    let tables = NoiseTables::new(1);
    let desc = common::doc(W, H, 128);
    let spec = PathSpec {
        water: 0.05,
        ..winding(PathMode::Carve, Profile::U)
    };
    let whole = Region::whole(W, H).rect();
    let mut d = Document::from_heights(&gpu, desc, &heights, &tables).unwrap();
    assert!(d.rivers_rect(whole).unwrap().is_none(), "no river yet");
    scarp::edit::path::apply(&mut d, &mut Default::default(), &spec).unwrap();
    let after = d.to_dense().unwrap();
    let water = d
        .rivers_rect(whole)
        .unwrap()
        .expect("a river made the field");
    // The same carve as a dry path.
    let mut dry = Document::from_heights(&gpu, desc, &heights, &tables).unwrap();
    let dry_spec = PathSpec {
        water: 0.0,
        ..spec.clone()
    };
    scarp::edit::path::apply(&mut dry, &mut Default::default(), &dry_spec).unwrap();
    assert!(
        dry.to_dense().unwrap() == after,
        "water leaves the carve as it is"
    );
    assert!(
        dry.rivers_rect(whole).unwrap().is_none(),
        "a dry path holds none"
    );

    let at = |v: &[f32], x: f32, y: f32| v[(y as u32 * W + x as u32) as usize];
    let (mut wet, mut centre_checked) = (0, 0);
    for (i, (&s, &h)) in water.iter().zip(&after).enumerate() {
        let p = [(i as u32 % W) as f32, (i as u32 / W) as f32];
        let dist = distance_to_curve(&spec.points, p);
        if dist > spec.reach() + 1.5 {
            assert_eq!(s, NO_WATER, "water beyond the reach at {p:?}");
        }
        wet += usize::from(s > h);
        // Along the centre line, where the carve cut to the bed: the chosen depth over it.
        if dist < 0.3 && at(&heights, p[0], p[1]) > h + spec.depth * 0.5 && s > h {
            assert!(
                s - h <= spec.water + 1e-5,
                "at {p:?}: {} deep, more than the water asked",
                s - h
            );
            centre_checked += usize::from((s - h - spec.water).abs() < 1e-3);
        }
    }
    assert!(wet > 2000, "{wet} texels under water");
    assert!(
        centre_checked > 20,
        "{centre_checked} centre texels at the depth"
    );

    // One undo step takes back the carve and its water; redo brings both.
    assert!(d.undo().unwrap());
    assert!(d.to_dense().unwrap() == heights);
    let undone = d.rivers_rect(whole).unwrap().unwrap();
    assert!(undone.iter().all(|&s| s == NO_WATER), "undo left water");
    assert!(d.redo().unwrap());
    assert!(d.rivers_rect(whole).unwrap().unwrap() == water);

    // Its journal step holds the water and replays it.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("h.r32");
    scarp::terrain::export::write_heights(&file, W, H, &heights).unwrap();
    let text = journal_json(&desc, &Initial::File(file), &[Step::Path(spec.clone())]).unwrap();
    assert!(text.contains("\"water\""), "{text}");
    let journal = Journal::parse(&text, Path::new(".")).unwrap();
    let mut replayed = Document::from_heights(&gpu, desc, &heights, &tables).unwrap();
    let mut tools = scarp::edit::Tools::default();
    journal
        .replay(
            &mut scarp::edit::Target::new(&mut replayed, &mut tools),
            |_, _| {},
        )
        .unwrap();
    assert!(replayed.rivers_rect(whole).unwrap().unwrap() == water);

    // Saved with the project and read back.
    let path = dir.path().join("river.scarp");
    let meta = scarp::session::meta_of(&d, vec![], &[]).unwrap();
    scarp::session::save_document(&mut d, &path, &meta, None, None).unwrap();
    let (mut back, _, _) = scarp::session::open_project_file(&gpu, &path, &tables).unwrap();
    assert!(back.rivers_rect(whole).unwrap().unwrap() == water);
    assert!(back.to_dense().unwrap() == after);
    assert_no_validation_messages(&gpu);
}

/// Distance from `p` to the Catmull-Rom curve through `points`.
fn distance_to_curve(points: &[[f32; 2]], p: [f32; 2]) -> f32 {
    let curve = scarp::brush::path::catmull_rom(points);
    curve
        .windows(2)
        .map(|w| {
            let (a, b) = (w[0], w[1]);
            let ab = [b[0] - a[0], b[1] - a[1]];
            let ap = [p[0] - a[0], p[1] - a[1]];
            let l2 = ab[0] * ab[0] + ab[1] * ab[1];
            let u = ((ap[0] * ab[0] + ap[1] * ab[1]) / l2.max(1e-12)).clamp(0.0, 1.0);
            (ap[0] - ab[0] * u).hypot(ap[1] - ab[1] * u)
        })
        .fold(f32::INFINITY, f32::min)
}

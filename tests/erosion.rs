//! Erosion (docs/erosion.md): the GPU kernels against the CPU twin, conservation of material and
//! water, a cone relaxing to the talus slope, flat ground that does not erode, and the CLI's
//! refusals. GPU tests run with validation on; any message fails.

mod common;

use common::{assert_no_validation_messages, gpu, max_diff, scarp, stderr};
use scarp::erosion::cpu::State;
use scarp::erosion::gpu::GpuErosion;
use scarp::erosion::run::{erode, RunSpec};
use scarp::erosion::{ErosionParams, Model};
use scarp::noise::{CpuTables, NoiseTables};
use scarp::pages::geometry::Region;

/// Largest |GPU - CPU| after 50 steps, as a fraction of the terrain's height range: the kernels
/// and the twin take the same operations in the same order (`precise` on the GPU), so they
/// differ by the GPU's square roots and divisions, amplified by the steps.
const TWIN_TOLERANCE: f32 = 1e-4;

/// A w x h fBm terrain, heights about 0..1.
fn terrain(w: u32, h: u32) -> Vec<f32> {
    common::fbm_terrain(w, h, 7, 90.0, 6)
}

fn sum(v: &[f32]) -> f64 {
    v.iter().map(|&x| f64::from(x)).sum()
}

/// An erode brush of `radius`, `strength` and `spacing`: 20 steps an instance, rain 0.05.
fn erode_brush(radius: f32, strength: f32, spacing: f32) -> scarp::brush::BrushSettings {
    use scarp::brush::{BrushSettings, BrushType};
    let mut brush = BrushSettings {
        radius,
        strength,
        spacing,
        ..BrushSettings::new(BrushType::Erode)
    };
    brush.erosion.steps = 20;
    brush.erosion.params.rain = 0.05;
    brush
}

/// Four samples at full pressure from `start`, `step` apart.
fn four_samples(start: [f32; 2], step: [f32; 2]) -> Vec<scarp::brush::stroke::StrokeSample> {
    (0..4)
        .map(|i| scarp::brush::stroke::StrokeSample {
            x: start[0] + step[0] * i as f32,
            y: start[1] + step[1] * i as f32,
            pressure: 1.0,
            t: i as f32 * 0.1,
        })
        .collect()
}

#[test]
fn gpu_matches_the_cpu_twin_after_50_steps_of_each_model() {
    let gpu = gpu();
    let (w, h) = (256, 256);
    let heights = terrain(w, h);
    let (lo, hi) = heights
        .iter()
        .fold((f32::MAX, f32::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    // Across the corner of four 128-texel pages.
    let region = Region {
        x: 40,
        y: 60,
        width: 200,
        height: 180,
    };
    for model in Model::ALL {
        let spec = RunSpec {
            model,
            steps: 50,
            params: ErosionParams::default(),
            height_scale: 64.0,
        };
        let mut on_gpu = heights.clone();
        let out_gpu = erode(Some(&gpu), &mut on_gpu, w, region, &spec, |_| {}).unwrap();
        let mut on_cpu = heights.clone();
        let out_cpu = erode(None, &mut on_cpu, w, region, &spec, |_| {}).unwrap();
        let diff = max_diff(&on_gpu, &on_cpu) / (hi - lo);
        assert!(
            diff <= TWIN_TOLERANCE,
            "{}: GPU and CPU differ by {diff} of the height range",
            model.name()
        );
        if model.hydraulic() {
            let water = max_diff(&out_gpu.water, &out_cpu.water) / (hi - lo);
            assert!(
                water <= TWIN_TOLERANCE,
                "{}: water differs by {water}",
                model.name()
            );
            assert!(out_cpu.water.iter().any(|&d| d > 0.0));
        }
        // The region changed; outside it nothing did.
        let inside = |i: usize| texel_in(region, w, i);
        assert!((0..heights.len()).any(|i| inside(i) && on_gpu[i] != heights[i]));
        assert!((0..heights.len()).all(|i| inside(i) || on_gpu[i] == heights[i]));
    }
    assert_no_validation_messages(&gpu);
}

#[test]
fn material_and_water_are_conserved() {
    let gpu = gpu();
    let (w, h) = (160u32, 120u32);
    let b: Vec<f32> = terrain(w, h).iter().map(|x| x * 40.0).collect();
    let params = ErosionParams {
        evaporation: 0.0,
        ..ErosionParams::default()
    };
    let push = params.push([w, h]);
    let n = (w * h) as f64;
    let scale = sum(&b).abs();
    // Thermal: sum of b, to rounding.
    let mut g = GpuErosion::new(&gpu, [w, h], &b).unwrap();
    g.run(&push, Model::Thermal, 40, None, |_| {}).unwrap();
    let st = g.state().unwrap();
    assert_ne!(st.b, b, "the thermal steps moved material");
    let drift = (sum(&st.b) - sum(&b)).abs() / scale;
    assert!(drift < 1e-6, "thermal: sum of b drifted by {drift}");
    // Hydraulic: sum of b + s, to rounding; water: each step adds dt * rain per texel (walls,
    // no evaporation), and no more.
    let mut g = GpuErosion::new(&gpu, [w, h], &b).unwrap();
    let mut water = 0.0;
    for step in 0..30 {
        g.run(&push, Model::Hydraulic, 1, None, |_| {}).unwrap();
        let st = g.state().unwrap();
        let material = sum(&st.b) + sum(&st.s);
        let drift = (material - sum(&b)).abs() / scale;
        assert!(drift < 1e-6, "step {step}: sum of b + s drifted by {drift}");
        let added = sum(&st.d) - water;
        let rain = f64::from(params.dt * params.rain) * n;
        assert!(
            (added - rain).abs() <= 1e-4 * rain.max(sum(&st.d) * 1e-2),
            "step {step}: water grew by {added}, rain was {rain}"
        );
        water = sum(&st.d);
    }
    let st = g.state().unwrap();
    assert!(sum(&st.s) > 0.0, "the water carries sediment");
    assert_no_validation_messages(&gpu);
}

#[test]
fn a_cone_relaxes_to_the_talus_slope_and_flat_ground_does_not_erode() {
    let gpu = gpu();
    let side = 64u32;
    // A cone of slope 2 (about 63 degrees).
    let cone: Vec<f32> = (0..side * side)
        .map(|i| {
            let (x, y) = ((i % side) as f32 - 31.5, (i / side) as f32 - 31.5);
            (60.0 - 2.0 * (x * x + y * y).sqrt()).max(0.0)
        })
        .collect();
    let params = ErosionParams {
        talus_angle: 30.0,
        thermal_rate: 0.5,
        ..ErosionParams::default()
    };
    let push = params.push([side, side]);
    let mut g = GpuErosion::new(&gpu, [side, side], &cone).unwrap();
    g.run(&push, Model::Thermal, 3000, None, |_| {}).unwrap();
    let b = g.state().unwrap().b;
    let tan = params.talus_angle.to_radians().tan();
    let at = |x: u32, y: u32| b[(y * side + x) as usize];
    let mut steepest = 0.0f32;
    for y in 0..side - 1 {
        for x in 0..side - 1 {
            steepest = steepest.max((at(x + 1, y) - at(x, y)).abs());
            steepest = steepest.max((at(x, y + 1) - at(x, y)).abs());
        }
    }
    assert!(
        steepest <= tan + 0.02,
        "slopes up to {steepest} remain (talus {tan})"
    );
    let before_top = cone.iter().cloned().fold(0.0, f32::max);
    let top = b.iter().cloned().fold(0.0, f32::max);
    assert!(
        top < before_top - 5.0,
        "the peak came down ({before_top} -> {top})"
    );
    // Flat ground under rain: water gathers, nothing erodes.
    let flat = vec![10.0f32; (side * side) as usize];
    let mut g = GpuErosion::new(&gpu, [side, side], &flat).unwrap();
    let push = ErosionParams::default().push([side, side]);
    g.run(&push, Model::Hydraulic, 50, None, |_| {}).unwrap();
    let st = g.state().unwrap();
    assert_eq!(st.b, flat);
    assert!(st.s.iter().all(|&s| s == 0.0));
    assert!(st.d.iter().all(|&d| d > 0.0));
    // The twin agrees.
    let mut cpu = State::new(side as usize, side as usize, flat.clone());
    for _ in 0..50 {
        cpu.hydraulic_step(&push);
    }
    assert_eq!(cpu.b, flat);
    assert_no_validation_messages(&gpu);
}

#[test]
fn bad_erode_flags_are_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.r32");
    let bytes: Vec<u8> = terrain(64, 64)
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    std::fs::write(&input, bytes).unwrap();
    let out = dir.path().join("out.r32");
    let (i, o) = (input.to_str().unwrap(), out.to_str().unwrap());
    let cases: [(&[&str], &str); 8] = [
        (&["--dt", "0"], "--dt"),
        (&["--rain", "-1"], "--rain"),
        (&["--dissolve", "30"], "--dissolve"),
        (&["--deposit", "21"], "--deposit"),
        (&["--erosion-depth", "0"], "--erosion-depth"),
        (&["--steps", "0"], "--steps"),
        (&["--region", "40,40,30,30"], "--region"),
        (&["--talus-angle", "95"], "--talus-angle"),
    ];
    for (flags, named) in cases {
        let mut args = vec!["erode", "--heights", i, "--out", o, "--backend", "cpu"];
        args.extend_from_slice(flags);
        let r = scarp(&args);
        let e = stderr(&r);
        assert!(!r.status.success(), "{flags:?} was accepted");
        assert!(e.contains(named), "{flags:?}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "one line: {e}");
        assert!(!out.exists(), "{flags:?} wrote {o}");
    }
    // A good run writes the output, and the sediment map where asked.
    let sed = dir.path().join("sed.r32");
    let r = scarp(&[
        "erode",
        "--heights",
        i,
        "--out",
        o,
        "--backend",
        "cpu",
        "--steps",
        "20",
        "--sediment",
        sed.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    assert!(out.exists() && sed.exists());
}

/// Whether texel `i` (row-major, `w` wide) lies in `region`.
fn texel_in(region: Region, w: u32, i: usize) -> bool {
    let (x, y) = (i as u32 % w, i as u32 / w);
    x >= region.x && x < region.x + region.width && y >= region.y && y < region.y + region.height
}

/// A region of the 320x256 test terrain across the corners of 128-texel pages (and of the
/// 256-texel pages' edge), and 40 steps of both models over it.
fn region_run() -> (Region, RunSpec) {
    let region = Region {
        x: 50,
        y: 30,
        width: 200,
        height: 180,
    };
    let spec = RunSpec {
        model: Model::Both,
        steps: 40,
        params: ErosionParams::default(),
        height_scale: 80.0,
    };
    (region, spec)
}

#[test]
fn a_document_region_erodes_as_one_undo_step_whatever_the_page_size() {
    use scarp::document::Document;
    let gpu = gpu();
    let (w, h) = (320u32, 256u32);
    let heights = terrain(w, h);
    let (region, spec) = region_run();
    let tables = NoiseTables::new(1);
    let mut results = Vec::new();
    for page in [128, 256] {
        let desc = common::doc(w, h, page);
        let mut d = Document::from_heights(&gpu, desc, &heights, &tables).unwrap();
        let before = d.to_dense().unwrap();
        scarp::edit::erode::region(&mut d, region, &spec, true, |_| {}).unwrap();
        let after = d.to_dense().unwrap();
        assert!(d.undo().unwrap());
        assert!(
            d.to_dense().unwrap() == before,
            "undo restores the heights bit for bit"
        );
        assert!(d.redo().unwrap());
        assert!(
            d.to_dense().unwrap() == after,
            "redo brings the erosion back"
        );
        results.push(after);
        // A layer selected: refused, nothing changes.
        common::add_and_select_layer(&mut d, "l");
        let e = scarp::edit::erode::region(&mut d, region, &spec, true, |_| {})
            .unwrap_err()
            .to_string();
        assert!(e.contains("select"), "{e}");
    }
    assert!(results[0] == results[1], "page size changed the result");
    // The same as eroding the grid directly.
    let mut direct = heights.clone();
    erode(Some(&gpu), &mut direct, w, region, &spec, |_| {}).unwrap();
    assert!(results[0] == direct);
    assert_no_validation_messages(&gpu);
}

/// Issue 39's wear and deposits: a region erosion adds, per texel, the metres it removed and laid
/// down (its heights before and after, times the height unit) to two fields, in the same undo
/// step as the heights; a second run adds to them; the live region run does the same; they are
/// saved with the project and reopened.
#[test]
fn region_erosion_accumulates_wear_and_deposits_in_metres_undone_with_the_heights() {
    use scarp::document::Document;
    use scarp::pages::geometry::Units;
    let gpu = gpu();
    let (w, h) = (320u32, 256u32);
    let heights = terrain(w, h);
    let (region, spec) = region_run();
    let desc = scarp::pages::DocumentDesc {
        units: Units {
            texel_size: Some(2.0),
            height_unit: Some(300.0),
            ..Units::default()
        },
        ..common::doc(w, h, 128)
    };
    let whole = Region::whole(w, h).rect();
    let tables = NoiseTables::new(1);
    let mut d = Document::from_heights(&gpu, desc, &heights, &tables).unwrap();
    assert_eq!(d.wear_rect(whole, false).unwrap(), None, "no wear before");
    let before = d.to_dense().unwrap();
    scarp::edit::erode::region(&mut d, region, &spec, true, |_| {}).unwrap();
    let after = d.to_dense().unwrap();
    let (want_wear, want_deposits) = scarp::wear::changes(&before, &after, 300.0);
    let wear = d
        .wear_rect(whole, false)
        .unwrap()
        .expect("wear after a run");
    let deposits = d.wear_rect(whole, true).unwrap().expect("deposits");
    assert!(wear == want_wear && deposits == want_deposits);
    assert!(wear.iter().any(|&m| m > 0.0) && deposits.iter().any(|&m| m > 0.0));
    // Outside the region nothing is worn.
    let inside = |i: usize| texel_in(region, w, i);
    assert!((0..wear.len()).all(|i| inside(i) || (wear[i] == 0.0 && deposits[i] == 0.0)));
    // Undo takes the wear with the heights; redo brings both back.
    assert!(d.undo().unwrap());
    assert!(d.to_dense().unwrap() == before);
    let zero = vec![0.0f32; wear.len()];
    assert!(d.wear_rect(whole, false).unwrap().unwrap() == zero);
    assert!(d.wear_rect(whole, true).unwrap().unwrap() == zero);
    assert!(d.redo().unwrap());
    assert!(d.wear_rect(whole, false).unwrap().unwrap() == wear);
    // A second run adds to the first's.
    scarp::edit::erode::region(&mut d, region, &spec, true, |_| {}).unwrap();
    let again = d.to_dense().unwrap();
    let (w2, d2) = scarp::wear::changes(&after, &again, 300.0);
    let sum = |a: &[f32], b: &[f32]| -> Vec<f32> { a.iter().zip(b).map(|(x, y)| x + y).collect() };
    assert!(d.wear_rect(whole, false).unwrap().unwrap() == sum(&wear, &w2));
    assert!(d.wear_rect(whole, true).unwrap().unwrap() == sum(&deposits, &d2));
    // Saved and reopened: the fields come back.
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("worn.scarp");
    let meta = scarp::session::meta_of(&d, Vec::new(), &[]).unwrap();
    scarp::session::save_document(&mut d, &project, &meta, None, None).unwrap();
    let (mut opened, _, _) = scarp::session::open_project_file(&gpu, &project, &tables).unwrap();
    assert!(opened.wear_rect(whole, false).unwrap().unwrap() == sum(&wear, &w2));
    assert!(opened.wear_rect(whole, true).unwrap().unwrap() == sum(&deposits, &d2));
    // The live region run adds its wear at its end, in its one undo step.
    let mut live = Document::from_heights(&gpu, desc, &heights, &tables).unwrap();
    let steps = live.undo_steps();
    let erosion = scarp::erosion::ErosionBrush {
        model: Model::Both,
        steps: 8,
        params: ErosionParams::default(),
        height_scale: Some(80.0),
    };
    let mut run = scarp::session::erosion_run::RegionRun::start(
        &mut live,
        &mut scarp::edit::Tools::default(),
        region,
        erosion,
        8,
    )
    .unwrap();
    while !run.complete() {
        run.advance(&mut live, 1e9).unwrap();
    }
    run.finish(&mut live).unwrap().expect("steps ran");
    assert_eq!(live.undo_steps(), steps + 1, "one undo step");
    let ran = live.to_dense().unwrap();
    let (lw, ld) = scarp::wear::changes(&before, &ran, 300.0);
    assert!(live.wear_rect(whole, false).unwrap().unwrap() == lw);
    assert!(live.wear_rect(whole, true).unwrap().unwrap() == ld);
    assert!(live.undo().unwrap());
    assert!(live.wear_rect(whole, false).unwrap().unwrap() == zero);
    assert_no_validation_messages(&gpu);
}

#[test]
fn an_erosion_stroke_matches_its_cpu_twin_undoes_and_replays_bit_exactly() {
    use scarp::brush::cpu::CpuTerrain;
    use scarp::brush::stroke::{stroke_instances, StrokeSample};
    use scarp::brush::{BrushSettings, BrushType};
    use scarp::document::Document;
    use scarp::journal::Journal;
    use std::sync::Arc;
    let gpu = gpu();
    let (w, h) = (320u32, 256u32);
    let heights = terrain(w, h);
    let desc = common::doc(w, h, 128);
    let tables = NoiseTables::new(1);
    let mut brush = BrushSettings {
        radius: 30.0,
        inner_radius: 5.0,
        strength: 0.8,
        spacing: 0.6,
        ..BrushSettings::new(BrushType::Erode)
    };
    brush.erosion.steps = 30;
    brush.erosion.params.rain = 0.05;
    // Across the page corner at (128, 128) and (256, 128).
    let samples: Vec<StrokeSample> = (0..6)
        .map(|i| {
            let t = i as f32 / 5.0;
            StrokeSample {
                x: 100.0 + 170.0 * t,
                y: 110.0 + 30.0 * t,
                pressure: 0.6 + 0.4 * t,
                t,
            }
        })
        .collect();
    let instances = stroke_instances(&brush, &samples);
    assert!(instances.len() > 3);
    let mut d = Document::from_heights(&gpu, desc, &heights, &tables).unwrap();
    let before = d.to_dense().unwrap();
    scarp::edit::stroke::apply(
        &mut d,
        &mut scarp::edit::Tools::default(),
        &brush,
        &instances,
    )
    .unwrap();
    let got = d.to_dense().unwrap();
    let mut twin = CpuTerrain::from_heights(desc, &heights, Arc::new(CpuTables::new(&tables)));
    twin.apply_stroke(&brush, &instances);
    let want = twin.to_dense();
    let (lo, hi) = heights
        .iter()
        .fold((f32::MAX, f32::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let diff = max_diff(&got, &want) / (hi - lo);
    assert!(
        diff <= TWIN_TOLERANCE,
        "GPU and CPU erosion strokes differ by {diff}"
    );
    let changed = (0..got.len()).filter(|&i| got[i] != before[i]).count();
    assert!(changed > 1000, "the stroke eroded {changed} texels");
    // One undo step; redo gives the same heights.
    assert!(d.undo().unwrap());
    assert!(d.to_dense().unwrap() == before);
    assert!(d.redo().unwrap());
    assert!(d.to_dense().unwrap() == got);
    // A journal: the brush reads back as written, and replaying gives the same heights.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("in.r32");
    let bytes: Vec<u8> = heights.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(&file, bytes).unwrap();
    let entry = serde_json::to_value(scarp::journal::BrushEntry::of(&brush)).unwrap();
    let samples_json = serde_json::to_value(&samples).unwrap();
    let text = serde_json::json!({
        "version": 2,
        "document": {"width": w, "height": h, "page_size": 128, "initial": {"file": "in.r32"}},
        "steps": [{"stroke": {"brush": entry, "samples": samples_json}}]
    })
    .to_string();
    let journal = Journal::parse(&text, dir.path()).unwrap();
    let path = dir.path().join("erode.json");
    std::fs::write(&path, &text).unwrap();
    let mut replayed = scarp::session::replay_journal(&gpu, &path, &tables).unwrap();
    assert!(replayed.to_dense().unwrap() == got, "a replay differs");
    // The stroke's wear and deposits replay too.
    let whole = Region::whole(w, h).rect();
    for deposits in [false, true] {
        let stroked = d.wear_rect(whole, deposits).unwrap();
        assert!(stroked.is_some() && replayed.wear_rect(whole, deposits).unwrap() == stroked);
    }
    assert_eq!(journal.steps.len(), 1);
    let bad = text.replace("\"steps\":30", "\"steps\":0");
    assert_ne!(bad, text);
    let e = Journal::parse(&bad, dir.path()).unwrap_err().to_string();
    assert!(e.contains("steps"), "{e}");
    assert_no_validation_messages(&gpu);
}

#[test]
fn a_live_region_run_is_one_undo_step_and_its_journal_step_replays_bit_exactly() {
    use scarp::brush::cpu::CpuTerrain;
    use scarp::document::Document;
    use scarp::erosion::ErosionBrush;
    use scarp::journal::{Initial, Journal, JournalFile, Replayer, Step};
    use scarp::session::erosion_run::{RegionRun, WATER_FIELD};
    use std::sync::Arc;
    let gpu = gpu();
    let (w, h) = (320u32, 256u32);
    let heights = terrain(w, h);
    let desc = common::doc(w, h, 128);
    let tables = NoiseTables::new(1);
    // Across the page corners at (128, 128) and (256, 128).
    let region = Region {
        x: 60,
        y: 40,
        width: 230,
        height: 170,
    };
    let erosion = ErosionBrush {
        model: Model::Both,
        steps: 1000,
        params: ErosionParams {
            rain: 0.05,
            ..ErosionParams::default()
        },
        height_scale: Some(80.0),
    };
    let mut d = Document::from_heights(&gpu, desc, &heights, &tables).unwrap();
    let before = d.to_dense().unwrap();
    let undo_steps = d.undo_steps();
    let mut run = RegionRun::start(
        &mut d,
        &mut scarp::edit::Tools::default(),
        region,
        erosion,
        8,
    )
    .unwrap();
    // Frames: the steps per frame grow to the most allowed; the view follows.
    run.advance(&mut d, 1e9).unwrap();
    run.advance(&mut d, 1e9).unwrap();
    let p = run.progress();
    assert_eq!((p.done, p.per_frame), (4 + 8, 8));
    let live = d.to_dense().unwrap();
    assert!(live != before, "the view shows the run as it goes");
    let inside = |i: usize| texel_in(region, w, i);
    assert!((0..live.len()).all(|i| inside(i) || live[i] == before[i]));
    let water = d
        .store
        .field(WATER_FIELD)
        .expect("a water field while running")
        .to_dense()
        .unwrap();
    assert!((0..water.len()).any(|i| inside(i) && water[i] > 0.0));
    assert!((0..water.len()).all(|i| (0.0..=1.0).contains(&water[i])));
    // Paused, a frame runs nothing.
    run.set_paused(true);
    run.advance(&mut d, 1e9).unwrap();
    assert_eq!(run.progress().done, 12);
    run.set_paused(false);
    for _ in 0..3 {
        run.advance(&mut d, 1e9).unwrap();
    }
    assert_eq!(run.progress().done, 36);
    assert!(!run.complete());
    // Finished early: one undo step, journaled with the steps run.
    let step = run.finish(&mut d).unwrap().expect("steps ran");
    assert!(d.store.field(WATER_FIELD).is_none(), "the water field goes");
    let got = d.to_dense().unwrap();
    assert_eq!(d.undo_steps(), undo_steps + 1);
    let Step::Erode {
        region: r,
        erosion: e,
    } = &step
    else {
        panic!("an erode step: {step:?}")
    };
    assert_eq!((*r, e.steps), (region, 36));
    assert!(d.undo().unwrap());
    assert!(d.to_dense().unwrap() == before, "undo restores every texel");
    assert!(d.redo().unwrap());
    assert!(d.to_dense().unwrap() == got);
    // The step replays bit for bit: on a document, and through a journal file.
    let mut fresh = Document::from_heights(&gpu, desc, &heights, &tables).unwrap();
    scarp::edit::Target::new(&mut fresh, &mut scarp::edit::Tools::default())
        .erode(*r, e)
        .unwrap();
    assert!(
        fresh.to_dense().unwrap() == got,
        "the journal step replays bit-exactly"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("in.r32");
    let bytes: Vec<u8> = heights.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(&file, bytes).unwrap();
    let text = JournalFile::of(
        &desc,
        &Initial::File("in.r32".into()),
        std::slice::from_ref(&step),
    )
    .unwrap()
    .to_json()
    .unwrap();
    let path = dir.path().join("run.json");
    std::fs::write(&path, &text).unwrap();
    let replayed = scarp::session::replay_journal(&gpu, &path, &tables)
        .unwrap()
        .to_dense()
        .unwrap();
    assert!(replayed == got, "a journal replay differs");
    // The CPU twin replays the step within the stated tolerance.
    let mut twin = CpuTerrain::from_heights(desc, &heights, Arc::new(CpuTables::new(&tables)));
    twin.erode(*r, e).unwrap();
    let (lo, hi) = heights
        .iter()
        .fold((f32::MAX, f32::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let diff = max_diff(&got, &twin.to_dense()) / (hi - lo);
    assert!(diff <= TWIN_TOLERANCE, "twin differs by {diff}");
    // Bad erode steps are refused by step and field.
    let cases = [
        (
            r#""region": [60, 40, 230, 170]"#,
            r#""region": [60, 40, 300, 170]"#,
            "steps[0]: erode.region",
        ),
        (r#""dt": 0.05"#, r#""dt": -1.0"#, "steps[0]: erode.dt"),
        (r#""rain": 0.05"#, r#""rainn": 0.05"#, "rainn"),
        (r#""rain": 0.05"#, r#""rain": "lots""#, "rain"),
    ];
    let compact = serde_json::to_string(&serde_json::from_str::<serde_json::Value>(&text).unwrap())
        .unwrap()
        .replace(":", ": ")
        .replace(",", ", ");
    for (from, to, expect) in cases {
        assert!(compact.contains(from), "{from} in {compact}");
        let bad = compact.replace(from, to);
        let e = Journal::parse(&bad, dir.path()).unwrap_err().to_string();
        assert!(e.contains(expect), "expected '{expect}' in: {e}");
    }
    // With a layer selected: the run and the journal step are refused, nothing changes.
    common::add_and_select_layer(&mut d, "l");
    let e = RegionRun::start(
        &mut d,
        &mut scarp::edit::Tools::default(),
        region,
        erosion,
        8,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("select"), "{e}");
    assert!(d.store.field(WATER_FIELD).is_none());
    let layered = compact.replace(
        r#""steps": [{"#,
        r#""steps": [{"layer": {"op": "add", "name": "l"}}, {"layer": {"op": "select", "name": "l"}}, {"#,
    );
    assert_ne!(layered, compact);
    let e = Journal::parse(&layered, dir.path())
        .unwrap_err()
        .to_string();
    assert!(e.contains("steps[2]: erode") && e.contains("base"), "{e}");
    assert_no_validation_messages(&gpu);
}

/// Issue 39: each instance of an erosion stroke adds the metres it removed and laid down to the
/// wear and deposits (the blend kernel, on the GPU; through the host, its twin), as part of the
/// stroke's one undo step.
#[test]
fn erosion_strokes_add_each_instances_wear_and_deposits_in_their_undo_step() {
    use scarp::brush::stroke::stroke_instances;
    use scarp::document::Document;
    use scarp::pages::geometry::Units;
    let gpu = gpu();
    let (w, h) = (320u32, 256u32);
    let heights = terrain(w, h);
    let tables = NoiseTables::new(1);
    let desc = |page_size| scarp::pages::DocumentDesc {
        units: Units {
            texel_size: Some(2.0),
            height_unit: Some(300.0),
            ..Units::default()
        },
        ..common::doc(w, h, page_size)
    };
    let brush = erode_brush(30.0, 0.8, 0.5);
    // Overlapping instances across the page corner at (128, 128).
    let instances = stroke_instances(&brush, &four_samples([100.0, 110.0], [20.0, 8.0]));
    assert!(instances.len() >= 3, "{} instances", instances.len());
    let whole = Region::whole(w, h).rect();
    let fields = |d: &mut Document| {
        let wear = d
            .wear_rect(whole, false)
            .unwrap()
            .expect("wear after a stroke");
        let deposits = d.wear_rect(whole, true).unwrap().expect("deposits");
        (wear, deposits)
    };
    let stroke = |d: &mut Document, tools: &mut scarp::edit::Tools, inst: &[_]| {
        scarp::edit::stroke::apply(d, tools, &brush, inst).unwrap();
    };
    let mut d = Document::from_heights(&gpu, desc(128), &heights, &tables).unwrap();
    let before = d.to_dense().unwrap();
    let steps = d.undo_steps();
    stroke(&mut d, &mut scarp::edit::Tools::default(), &instances);
    assert_eq!(d.undo_steps(), steps + 1, "one undo step");
    let got = d.to_dense().unwrap();
    let (wear, deposits) = fields(&mut d);
    // Instance by instance, each one's change in metres (wear::change, the kernel's arithmetic)
    // summed: the heights, and the wear and deposits a stroke of them holds, bit for bit.
    let one_by_one = |via_host: bool| {
        let mut tools = scarp::edit::Tools::default();
        tools.erode.set_via_host(via_host);
        let mut d = Document::from_heights(&gpu, desc(128), &heights, &tables).unwrap();
        let mut sums = (vec![0.0f32; before.len()], vec![0.0f32; before.len()]);
        let mut last = before.clone();
        for inst in &instances {
            stroke(&mut d, &mut tools, std::slice::from_ref(inst));
            let now = d.to_dense().unwrap();
            let (dw, dd) = scarp::wear::changes(&last, &now, 300.0);
            for i in 0..dw.len() {
                sums.0[i] += dw[i];
                sums.1[i] += dd[i];
            }
            last = now;
        }
        (last, sums)
    };
    let (last, want) = one_by_one(false);
    assert!(
        last == got,
        "instance by instance gives the stroke's heights"
    );
    assert!(wear == want.0, "the wear is the instances' removals summed");
    assert!(
        deposits == want.1,
        "the deposits are the instances' layers summed"
    );
    let worn = wear.iter().filter(|&&m| m > 0.0).count();
    let laid = deposits.iter().filter(|&&m| m > 0.0).count();
    assert!(
        worn > 500 && laid > 500,
        "{worn} texels worn, {laid} laid down"
    );
    // Nothing outside the instances' squares.
    let squares: Vec<Region> = instances
        .iter()
        .filter_map(|b| {
            let inst = scarp::brush::erosion_instance(b, &brush);
            scarp::erosion::brush::square(w, h, &inst)
        })
        .collect();
    let outside = |i: usize| !squares.iter().any(|&r| texel_in(r, w, i));
    assert!((0..wear.len()).all(|i| !outside(i) || (wear[i] == 0.0 && deposits[i] == 0.0)));
    // Undo takes the fields with the heights; redo brings them back.
    assert!(d.undo().unwrap());
    assert!(d.to_dense().unwrap() == before);
    let zero = vec![0.0f32; wear.len()];
    assert!(fields(&mut d) == (zero.clone(), zero));
    assert!(d.redo().unwrap());
    assert!(d.to_dense().unwrap() == got && fields(&mut d) == (wear.clone(), deposits.clone()));
    // The page size changes nothing.
    let mut big_pages = Document::from_heights(&gpu, desc(256), &heights, &tables).unwrap();
    stroke(
        &mut big_pages,
        &mut scarp::edit::Tools::default(),
        &instances,
    );
    assert!(fields(&mut big_pages) == (wear.clone(), deposits.clone()));
    // Through the host (the squares read back, eroded, blended and summed there): the twin of
    // the blend kernel, within the GPU's rounding of the blend.
    let mut tools = scarp::edit::Tools::default();
    tools.erode.set_via_host(true);
    let mut host = Document::from_heights(&gpu, desc(128), &heights, &tables).unwrap();
    stroke(&mut host, &mut tools, &instances);
    let (host_wear, host_deposits) = fields(&mut host);
    let (host_last, host_want) = one_by_one(true);
    assert!(host.to_dense().unwrap() == host_last);
    assert!(
        (host_wear.clone(), host_deposits.clone()) == host_want,
        "through the host, the instances' changes summed, bit for bit"
    );
    let (lo, hi) = heights
        .iter()
        .fold((f32::MAX, f32::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let relief = 300.0 * (hi - lo);
    let diff = max_diff(&host_wear, &wear).max(max_diff(&host_deposits, &deposits));
    assert!(
        diff <= TWIN_TOLERANCE * relief,
        "host and GPU wear differ by {diff} m of {relief} m"
    );
    assert!(host.undo().unwrap());
    let zero = vec![0.0f32; wear.len()];
    assert!(fields(&mut host) == (zero.clone(), zero));
    assert_no_validation_messages(&gpu);
}

/// An erosion stroke whose first part falls outside the document begins its own undo step at
/// its first square on the document: it does not join the stroke before.
#[test]
fn an_erosion_stroke_begun_off_the_document_is_its_own_undo_step() {
    use scarp::brush::shared::BrushInstance;
    use scarp::document::Document;
    use scarp::edit::stroke::enqueue;
    let gpu = gpu();
    let (w, h) = (320u32, 256u32);
    let tables = NoiseTables::new(1);
    let mut d =
        Document::from_heights(&gpu, common::doc(w, h, 128), &terrain(w, h), &tables).unwrap();
    let mut tools = scarp::edit::Tools::default();
    let brush = erode_brush(30.0, 0.8, 0.5);
    let at = |x: f32, y: f32| BrushInstance {
        center: [x, y],
        radius: brush.radius,
        strength: brush.strength,
        ..Default::default()
    };
    enqueue(&mut d, &mut tools, &brush, &[at(100.0, 100.0)], false).unwrap();
    let after_first = d.to_dense().unwrap();
    let whole = Region::whole(w, h).rect();
    let worn_first = d.wear_rect(whole, false).unwrap();
    let steps = d.undo_steps();
    // The second stroke: a part off the document, then a part on it.
    enqueue(&mut d, &mut tools, &brush, &[at(-500.0, -500.0)], false).unwrap();
    assert_eq!(d.undo_steps(), steps, "nothing on the document yet");
    enqueue(&mut d, &mut tools, &brush, &[at(220.0, 150.0)], true).unwrap();
    assert_eq!(
        d.undo_steps(),
        steps + 1,
        "the second stroke is a step of its own"
    );
    assert!(
        d.to_dense().unwrap() != after_first,
        "the second stroke eroded"
    );
    assert!(d.undo().unwrap());
    assert!(
        d.to_dense().unwrap() == after_first,
        "undo takes back the second stroke only"
    );
    assert!(d.wear_rect(whole, false).unwrap() == worn_first);
    assert_no_validation_messages(&gpu);
}

#[test]
fn erosion_strokes_do_not_depend_on_the_page_size_and_r16_documents_match_their_twin() {
    use scarp::brush::cpu::CpuTerrain;
    use scarp::brush::stroke::stroke_instances;
    use scarp::document::Document;
    use scarp::pages::geometry::HeightFormat;
    use std::sync::Arc;
    let gpu = gpu();
    let (w, h) = (320u32, 256u32);
    let heights = terrain(w, h);
    let tables = NoiseTables::new(1);
    let brush = erode_brush(40.0, 0.9, 0.8);
    let instances = stroke_instances(&brush, &four_samples([90.0, 100.0], [60.0, 15.0]));
    let stroke = |desc| {
        let mut d = Document::from_heights(&gpu, desc, &heights, &tables).unwrap();
        scarp::edit::stroke::apply(
            &mut d,
            &mut scarp::edit::Tools::default(),
            &brush,
            &instances,
        )
        .unwrap();
        let wear = d.wear_rect(Region::whole(w, h).rect(), false).unwrap();
        (d.to_dense().unwrap(), wear.expect("wear after a stroke"))
    };
    // r32f: squares copied between page images and the erosion buffers on the GPU.
    let pages: Vec<Vec<f32>> = [128, 256, 512]
        .into_iter()
        .map(|p| stroke(common::doc(w, h, p)).0)
        .collect();
    assert!(
        pages[0] == pages[1] && pages[1] == pages[2],
        "page size changed a stroke"
    );
    // r16: through the host, quantized; the twin quantizes the same way.
    let r16 = scarp::pages::geometry::DocumentDesc {
        format: HeightFormat::R16,
        height_min: -1.0,
        height_max: 2.0,
        ..common::doc(w, h, 128)
    };
    let (got, r16_wear) = stroke(r16);
    // Through the host, each instance's change before quantizing is worn away.
    let worn = r16_wear.iter().filter(|&&m| m > 0.0).count();
    assert!(worn > 500, "{worn} texels of the r16 document worn");
    let mut twin = CpuTerrain::from_heights(r16, &heights, Arc::new(CpuTables::new(&tables)));
    twin.apply_stroke(&brush, &instances);
    let diff = max_diff(&got, &twin.to_dense());
    assert!(
        diff <= 3.0 / 65535.0 * 3.0,
        "r16 stroke differs from its twin by {diff}"
    );
    let start = Document::from_heights(&gpu, r16, &heights, &tables)
        .unwrap()
        .to_dense()
        .unwrap();
    assert!(got != start, "the r16 stroke eroded");
    assert_no_validation_messages(&gpu);
}

#[test]
fn a_region_past_what_the_device_binds_is_refused_with_one_line_before_any_work() {
    use scarp::document::Document;
    use scarp::erosion::gpu::GpuErosion;
    use scarp::session::erosion_run::{RegionRun, WATER_FIELD};
    let gpu = gpu();
    // A flat document just larger than one binding's worth of texels (no pages are made).
    let most = GpuErosion::max_texels(&gpu);
    let side = 2048u32;
    let rows = (most / u64::from(side) + 1).div_ceil(128) as u32 * 128;
    let desc = common::doc(side, rows, 512);
    let mut d = Document::new(&gpu, desc, 0.25, &NoiseTables::new(1)).unwrap();
    let whole = Region {
        x: 0,
        y: 0,
        width: side,
        height: rows,
    };
    let spec = RunSpec {
        model: Model::Both,
        steps: 3,
        params: ErosionParams::default(),
        height_scale: 100.0,
    };
    let e = scarp::edit::erode::region(&mut d, whole, &spec, true, |_| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("past what this GPU"), "{e}");
    let e = RegionRun::start(
        &mut d,
        &mut scarp::edit::Tools::default(),
        whole,
        scarp::erosion::ErosionBrush::default(),
        8,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("past what this GPU"), "{e}");
    assert!(d.store.field(WATER_FIELD).is_none());
    assert_eq!(d.undo_steps(), 0, "nothing changed");
    assert_no_validation_messages(&gpu);
}

use super::*;
use crate::brush::shared::BrushInstance;
use crate::brush::stroke::{stroke_instances, StrokeSample};
use crate::brush::{BrushSettings, BrushType, Falloff};
use crate::noise::{NoiseKind, NoiseSettings};
use crate::pages::geometry::HeightFormat;

fn parse(s: &str) -> Result<Journal, String> {
    Journal::parse(s, Path::new(".")).map_err(|e| e.to_string())
}

const OK: &str = r#"{"version": 1,
    "document": {"width": 1024, "height": 1024, "format": "r32f", "page_size": 512,
                 "height_min": 0.0, "height_max": 1.0, "initial": {"flat": 0.0}},
    "steps": [
      {"stroke": {"brush": {"type": "raise", "radius": 64, "inner_radius": 0, "strength": 0.5,
                             "spacing": 0.25, "falloff": "parabolic"},
                  "samples": [{"x": 512, "y": 512, "pressure": 1.0, "t": 0.0}]}},
      {"undo": 1}, {"redo": 1}]}"#;

/// Every struct of a journal refuses a misspelled field, naming it (a misspelled sample
/// field painted at pressure 1.0 before).
#[test]
fn a_misspelled_field_is_refused_in_every_journal_struct() {
    let layer = r#"{"version": 2, "document": {"width": 64, "height": 64},
        "steps": [{"layer": {"op": "add", "name": "a", "modee": "add"}}]}"#;
    let erode = r#"{"version": 2, "document": {"width": 64, "height": 64},
        "steps": [{"erode": {"regoin": [0, 0, 8, 8]}}]}"#;
    let path = r#"{"version": 2, "document": {"width": 64, "height": 64},
        "steps": [{"path": {"points": [[1, 1], [9, 9]], "widht": 4}}]}"#;
    let view = r#"{"version": 2, "document": {"width": 64, "height": 64}, "steps": [],
        "view": {"camera": {"target": [0, 0, 0], "distance": 9, "yaw_degrees": 0,
        "pitch_degrees": 30, "position": [0, 0, 0], "fov_y_degrees": 50, "tilt": 1},
        "vertical_scale": 1}}"#;
    let cases = [
        (view.to_string(), "tilt"),
        (
            OK.replace(r#""pressure": 1.0"#, r#""presure": 1.0"#),
            "presure",
        ),
        (
            OK.replace(r#""version": 1"#, r#""version": 1, "verison": 1"#),
            "verison",
        ),
        (OK.replace(r#""width": 1024"#, r#""widht": 1024"#), "widht"),
        (OK.replace(r#""samples""#, r#""sampels""#), "sampels"),
        (
            OK.replace(r#""radius": 64"#, r#""radius": 64, "raduis": 3"#),
            "raduis",
        ),
        (OK.replace(r#"{"undo": 1}"#, r#"{"undoo": 1}"#), "undoo"),
        (layer.to_string(), "modee"),
        (erode.to_string(), "regoin"),
        (path.to_string(), "widht"),
    ];
    for (text, field) in cases {
        let e = parse(&text).unwrap_err();
        assert!(e.contains(field), "{field}: {e}");
    }
}

#[test]
fn brush_errors_name_the_field_even_inside_the_noise_parameters() {
    let typo = OK.replace(r#""type": "raise""#, r#""type": "noise", "octavez": 3"#);
    let e = parse(&typo).unwrap_err();
    assert!(e.contains("octavez"), "{e}");
    let bad = OK.replace(r#""type": "raise""#, r#""type": "noise", "seed": "x""#);
    let e = parse(&bad).unwrap_err();
    assert!(e.starts_with("steps[0].stroke.brush.seed: "), "{e}");
}

#[test]
fn every_brush_type_parses_by_name() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.r32"), [0u8; 4]).unwrap();
    for ty in BrushType::ALL {
        let extra = if ty == BrushType::Stamp {
            r#", "stamp": "s.r32", "stamp_size": [1, 1]"#
        } else {
            ""
        };
        let text = OK.replace(
            r#""type": "raise""#,
            &format!(r#""type": "{}"{extra}"#, ty.name()),
        );
        let j = Journal::parse(&text, dir.path()).unwrap_or_else(|e| panic!("{}: {e}", ty.name()));
        let Step::Stroke { brush, .. } = &j.steps[0] else {
            panic!()
        };
        assert_eq!(brush.brush, ty);
    }
}

#[test]
fn stamp_brushes_load_their_image_relative_to_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.r32"), [0u8; 16]).unwrap();
    let text = OK.replace(
        r#""type": "raise""#,
        r#""type": "stamp", "stamp": "s.r32", "stamp_size": [2, 2], "stamp_scale": 0.5"#,
    );
    let j = Journal::parse(&text, dir.path()).unwrap();
    let Step::Stroke { brush, .. } = &j.steps[0] else {
        panic!()
    };
    assert_eq!(
        brush.stamp.as_ref().map(|s| (s.width, s.height)),
        Some((2, 2))
    );
    let missing = OK.replace(
        r#""type": "raise""#,
        r#""type": "stamp", "stamp": "nope.png""#,
    );
    let e = Journal::parse(&missing, dir.path())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("steps[0]: stroke.brush.stamp") && e.contains("nope.png"),
        "{e}"
    );
    let none = OK.replace(r#""type": "raise""#, r#""type": "stamp""#);
    assert!(Journal::parse(&none, dir.path())
        .unwrap_err()
        .to_string()
        .contains("needs a stamp image"));
}

#[test]
fn stamps_beside_a_saved_journal_are_named_relative_to_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("stamps")).unwrap();
    let file = dir.path().join("stamps/s.r32");
    std::fs::write(&file, 1.0f32.to_le_bytes()).unwrap();
    let mut b = BrushSettings::new(BrushType::Stamp);
    b.stamp = Some(std::sync::Arc::new(
        crate::brush::stamp::Stamp::load(&file, None).unwrap(),
    ));
    let sample = StrokeSample {
        x: 4.0,
        y: 4.0,
        pressure: 1.0,
        t: 0.0,
    };
    let steps = [Step::Stroke {
        brush: b.clone(),
        samples: vec![sample],
    }];
    let desc = DocumentDesc::for_heights(16, 16);
    let mut j = JournalFile::of(&desc, &Initial::Flat(0.0), &steps).unwrap();
    // Elsewhere: absolute, as written.
    let mut elsewhere = j.clone();
    elsewhere.stamps_relative_to(Path::new("/nowhere"));
    assert_eq!(elsewhere, j);
    j.stamps_relative_to(dir.path());
    let StepEntry::Stroke(s) = &j.steps[0] else {
        panic!()
    };
    assert_eq!(s.brush.stamp.as_deref(), Some(Path::new("stamps/s.r32")));
    // Read from its folder, the same brush.
    let back = Journal::parse(&j.to_json().unwrap(), dir.path()).unwrap();
    let Step::Stroke { brush, .. } = &back.steps[0] else {
        panic!()
    };
    assert_eq!(brush.stamp.as_deref().map(|s| &s.values), Some(&vec![1.0]));
}

#[test]
fn a_stamp_brush_loaded_from_a_file_is_written_with_its_path_and_reads_back_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = Vec::new();
    for v in [0.0f32, 0.25, 0.5, 1.0, 0.75, 0.125] {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(dir.path().join("s.r32"), bytes).unwrap();
    let mut b = BrushSettings::new(BrushType::Stamp);
    b.stamp = Some(std::sync::Arc::new(
        crate::brush::stamp::Stamp::load(&dir.path().join("s.r32"), Some([3, 2])).unwrap(),
    ));
    b.stamp_scale = 0.7;
    b.stamp_follow = false;
    b.dir_angle_deg = 35.0;
    let entry = preset(&b).unwrap();
    assert!(entry.stamp.as_deref().unwrap().is_absolute());
    // Read from anywhere: the path is absolute.
    let json = serde_json::to_string(&entry).unwrap();
    let back = parse_brush(&json, Path::new("/")).unwrap();
    assert_eq!(back, b);
    // A stamp made in memory has no file to name.
    b.stamp = Some(std::sync::Arc::new(crate::brush::stamp::Stamp {
        width: 1,
        height: 1,
        values: vec![1.0],
        source: None,
    }));
    assert!(matches!(preset(&b), Err(JournalError::StampNotWritable)));
}

#[test]
fn the_documented_example_parses() {
    let j = parse(OK).unwrap();
    assert_eq!(j.document.width, 1024);
    assert_eq!(j.steps.len(), 3);
    let Step::Stroke { brush, samples } = &j.steps[0] else {
        panic!("first step is a stroke")
    };
    assert_eq!(stroke_instances(brush, samples).len(), 1);
}

#[test]
fn errors_name_the_step_and_field() {
    let cases = [
        (
            OK.replace(r#""radius": 64"#, r#""radius": -1"#),
            "steps[0]: stroke.brush.radius",
        ),
        (
            OK.replace(r#""type": "raise""#, r#""type": "melt""#),
            "brush.type",
        ),
        (OK.replace(r#""version": 1"#, r#""version": 9"#), "version"),
        (
            OK.replace(r#"{"undo": 1}, {"redo": 1}"#, r#"{"undo": 2}"#),
            "steps[1]: undo",
        ),
        (
            OK.replace(r#"{"undo": 1}, {"redo": 1}"#, r#"{"redo": 1}"#),
            "steps[1]: redo",
        ),
        (
            OK.replace(r#""pressure": 1.0"#, r#""pressure": 3.0"#),
            "samples[0].pressure",
        ),
        (
            OK.replace(r#""page_size": 512"#, r#""page_size": 7"#),
            "document: page_size",
        ),
        (
            OK.replace(r#""spacing": 0.25"#, r#""spacing": 0.25, "colour": 1"#),
            "colour",
        ),
        (
            OK.replace(r#""spacing": 0.25"#, r#""spacing": 0.25, "steps": 5"#),
            "brush.steps: only erode",
        ),
        (OK.replace(r#""x": 512"#, r#""x": "left""#), "samples[0].x"),
        ("{".to_string(), "EOF"),
    ];
    for (text, expect) in cases {
        let e = parse(&text).unwrap_err();
        assert!(e.contains(expect), "expected '{expect}' in: {e}");
    }
}

#[test]
fn noise_brushes_take_scarp_noise_names_and_defaults() {
    let text = OK.replace(
        r#""type": "raise""#,
        r#""type": "noise", "kind": "jordan", "seed": 3, "offset": [1.5, -2], "octaves": 6"#,
    );
    let j = parse(&text).unwrap();
    let Step::Stroke { brush, .. } = &j.steps[0] else {
        panic!()
    };
    assert_eq!(brush.noise.kind, NoiseKind::Jordan);
    assert_eq!(
        (brush.noise.seed, brush.noise.octaves, brush.noise.offset),
        (3, 6, [1.5, -2.0])
    );
    assert_eq!(brush.noise.warp, NoiseSettings::new(NoiseKind::Jordan).warp);
    let bad = OK.replace(r#""type": "raise""#, r#""type": "noise", "octaves": 40"#);
    assert!(parse(&bad).unwrap_err().contains("octaves"));
}

#[test]
fn written_journals_read_back_to_the_same_brushes_and_instances() {
    let mut noise = BrushSettings::new(BrushType::Noise);
    noise.noise = NoiseSettings::new(NoiseKind::Jordan);
    noise.noise.seed = 7;
    noise.radius = 33.0;
    noise.falloff = Falloff::Power;
    noise.falloff_power = 3.5;
    let mut dir = BrushSettings::new(BrushType::Directional);
    dir.dir_angle_deg = 30.0;
    dir.dir_ratio = 5.0;
    let samples = |k: f32| {
        (0..6)
            .map(|i| StrokeSample {
                x: 10.0 + 9.0 * i as f32,
                y: 20.0 + k * (i as f32).sin() * 5.0,
                pressure: 0.5 + 0.1 * i as f32,
                t: i as f32 * 0.01,
            })
            .collect::<Vec<_>>()
    };
    let steps = vec![
        Step::Stroke {
            brush: noise.clone(),
            samples: samples(1.0),
        },
        Step::Stroke {
            brush: dir.clone(),
            samples: samples(2.0),
        },
        Step::Undo(1),
        Step::Redo(1),
    ];
    let doc = DocumentDesc {
        width: 100,
        height: 80,
        format: HeightFormat::R16,
        page_size: 128,
        height_min: -1.0,
        height_max: 2.0,
        units: Default::default(),
    };
    let text = journal_json(&doc, &Initial::Flat(0.25), &steps).unwrap();
    let j = Journal::parse(&text, Path::new(".")).unwrap();
    assert_eq!(j.document, doc);
    assert_eq!(j.initial, Initial::Flat(0.25));
    assert_eq!(j.steps.len(), 4);
    for (step, (brush, k)) in j.steps.iter().zip([(&noise, 1.0), (&dir, 2.0)]) {
        let Step::Stroke {
            brush: b,
            samples: s,
        } = step
        else {
            panic!("not a stroke")
        };
        assert_eq!(b, brush);
        assert_eq!(s, &samples(k));
        assert_eq!(stroke_instances(b, s), stroke_instances(brush, &samples(k)));
    }
    let preset = serde_json::to_string(&preset(&noise).unwrap()).unwrap();
    assert_eq!(parse_brush(&preset, Path::new(".")).unwrap(), noise);
    let bad = preset.replace("\"radius\":33.0", "\"radius\":-3.0");
    assert!(parse_brush(&bad, Path::new("."))
        .unwrap_err()
        .to_string()
        .starts_with("radius"));
}

/// Every shipped journal (stamps aside: their image path is not written yet) goes through the
/// typed file format and back: the written file reads back equal, and its checked steps are
/// the original's brushes and instances.
#[test]
fn journal_files_round_trip() {
    fn journals(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                journals(&p, out);
            } else if p.extension().is_some_and(|x| x == "json") {
                out.push(p);
            }
        }
    }
    let mut paths = Vec::new();
    journals(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/journals"),
        &mut paths,
    );
    let mut checked = 0;
    for path in &paths {
        let j = Journal::load(path).unwrap();
        let file = match JournalFile::of(&j.document, &j.initial, &j.steps) {
            Ok(f) => f,
            Err(e) => {
                assert!(e.to_string().contains("stamp"), "{}: {e}", path.display());
                continue;
            }
        };
        let back: JournalFile = serde_json::from_str(&file.to_json().unwrap()).unwrap();
        assert_eq!(back, file, "{}", path.display());
        let again = Journal::check(&back, Path::new(".")).unwrap();
        assert_eq!(again.document, j.document);
        let strokes = |j: &Journal| -> Vec<(BrushSettings, Vec<BrushInstance>)> {
            j.steps
                .iter()
                .filter_map(|s| match s {
                    Step::Stroke { brush, samples } => {
                        Some((brush.clone(), stroke_instances(brush, samples)))
                    }
                    _ => None,
                })
                .collect()
        };
        assert_eq!(strokes(&again), strokes(&j), "{}", path.display());
        checked += 1;
    }
    assert!(checked >= 4, "only {checked} journals checked");
}

/// The engines walkthrough's journal (docs/engines.md: paint, paint the uplift map, erode,
/// geology) is a journal Scarp takes: it loads and checks (its replay takes minutes on
/// lavapipe, so the replay suites leave it out).
#[test]
fn the_walkthrough_journal_checks() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/engines/walkthrough.json");
    let j = Journal::load(&path).unwrap();
    let kinds: Vec<&str> = j
        .steps
        .iter()
        .map(|s| match s {
            Step::Stroke { .. } => "stroke",
            Step::Erode { .. } => "erode",
            Step::Geology { .. } => "geology",
            _ => "other",
        })
        .collect();
    for k in ["stroke", "erode", "geology"] {
        assert!(kinds.contains(&k), "{k}: {kinds:?}");
    }
    assert_eq!(j.document.units.texel_size, Some(8.0));
}

/// A geology step: a misspelled field is refused by name, a bad value names its field as the
/// journal spells it, an unstable time step is refused before any work, and absent fields take
/// the documented defaults.
#[test]
fn geology_steps_are_checked_field_by_field() {
    let doc = r#"{"version": 2, "document": {"width": 64, "height": 64, "units": {"texel_size": 10}},
        "steps": [{"geology": STEP}]}"#;
    let with = |step: &str| doc.replace("STEP", step);
    for (step, want) in [
        (r#"{"erodibilty": 1e-5}"#, "erodibilty"),
        (r#"{"iteratons": 10}"#, "iteratons"),
        (r#"{"erodibility": -1}"#, "geology.erodibility must be"),
        (r#"{"slope_exponent": 0}"#, "geology.slope_exponent must be"),
        (r#"{"iterations": 0}"#, "geology.iterations must be"),
        (r#"{"region": [60, 0, 8, 8]}"#, "geology.region"),
        (r#"{"time_step": 100000, "diffusion": 1}"#, "unstable"),
        (
            r#"{"critical_slope": 90}"#,
            "geology.critical_slope must be",
        ),
        (r#"{"critical_slope": 0}"#, "geology.critical_slope must be"),
        (r#"{"solve_steady": true}"#, "geology.solve_steady needs"),
        (
            r#"{"solve_steady": true, "until_steady": 0.01, "slope_exponent": 2}"#,
            "geology.solve_steady needs",
        ),
    ] {
        let e = parse(&with(step)).unwrap_err();
        assert!(e.contains(want), "{step}: {e}");
    }
    let j = Journal::parse(&with(r#"{"iterations": 10, "coarse": 1}"#), Path::new(".")).unwrap();
    match &j.steps[0] {
        Step::Geology { region, run } => {
            assert_eq!((region.width, region.height), (64, 64));
            assert_eq!((run.iterations, run.coarse), (10, 1));
            assert!(run.params.is_default());
            assert!(!run.solve_steady);
        }
        other => panic!("{other:?}"),
    }
    let j = Journal::parse(
        &with(r#"{"until_steady": 0.01, "solve_steady": true}"#),
        Path::new("."),
    )
    .unwrap();
    let Step::Geology { run, .. } = &j.steps[0] else {
        panic!("{:?}", j.steps[0]);
    };
    assert!(run.solve_steady);
    // Written back as it was read.
    let text = journal_json(&j.document, &j.initial, &j.steps).unwrap();
    assert!(text.contains("\"solve_steady\": true"), "{text}");
}

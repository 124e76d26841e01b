//! Project files on the GPU engine (lavapipe in CI, validation on): a saved project reopens to
//! the same heights (r32f and r16, version 2 and version 1), a session that crashed after its
//! last save is recovered by replaying its recovery journal onto that save — bit for bit —, huge
//! sparse documents save small, incremental saves write only changed pages, and an interrupted
//! save leaves the previous one readable.

mod common;

use common::{assert_no_validation_messages, gpu};
use scarp::brush::stroke::StrokeSample;
use scarp::brush::{BrushSettings, BrushType};
use scarp::document::Document;
use scarp::edit::Tools;
use scarp::journal::Step;
use scarp::noise::{NoiseKind, NoiseTables};
use scarp::pages::geometry::{DocumentDesc, HeightFormat};
use scarp::project;
use scarp::session::LiveStroke;
use scarp::session::{meta_of, open_project_file, recovery_of, replay_recovery, save_document};

/// Saves `t` as a whole new version-2 project.
fn save_whole(t: &mut Document, path: &std::path::Path) -> project::v2::SaveReport {
    let meta = meta_of(t, vec![], &[]).unwrap();
    save_document(t, path, &meta, None, None).unwrap().1
}

/// Opens the project at `path` as a document.
fn reopen(gpu: &std::sync::Arc<scarp::gpu::Gpu>, path: &std::path::Path) -> Document {
    open_project_file(gpu, path, &NoiseTables::new(2009))
        .unwrap()
        .0
}

fn doc(format: HeightFormat) -> DocumentDesc {
    DocumentDesc {
        width: 300,
        height: 260,
        format,
        page_size: 128,
        height_min: -1.0,
        height_max: 2.0,
        units: Default::default(),
    }
}

fn hills(d: &DocumentDesc) -> Vec<f32> {
    (0..d.width * d.height)
        .map(|i| {
            let (x, y) = ((i % d.width) as f32, (i / d.width) as f32);
            (x * 0.05).sin() * (y * 0.04).cos() * 0.6 + 0.3
        })
        .collect()
}

#[test]
fn projects_reopen_to_the_same_heights() {
    let gpu = gpu();
    let tables = NoiseTables::new(2009);
    let dir = tempfile::tempdir().unwrap();
    for format in [HeightFormat::R32f, HeightFormat::R16] {
        let d = doc(format);
        let mut t = Document::from_heights(&gpu, d, &hills(&d), &tables).unwrap();
        let before = t.to_dense().unwrap();
        let path = dir.path().join(format!("{format:?}.scarp"));
        save_whole(&mut t, &path);
        let (mut back, meta, file) = open_project_file(&gpu, &path, &tables).unwrap();
        assert_eq!(meta.document, d);
        assert!(file.is_some(), "version 2 is written");
        assert_eq!(back.memory().gpu_pages, 0, "opening reads no page");
        assert!(back.to_dense().unwrap() == before, "{format:?}");
        // Version-1 files still open.
        let v1 = dir.path().join(format!("{format:?}-v1.scarp"));
        let old = project::Project {
            document: d,
            flat: t.flat(),
            pages: t.page_heights().unwrap(),
            presets: vec![],
            journal: None,
        };
        project::v1::save(&v1, &old).unwrap();
        let (mut back, _, file) = open_project_file(&gpu, &v1, &tables).unwrap();
        assert!(file.is_none());
        assert!(back.to_dense().unwrap() == before, "{format:?} version 1");
    }
    assert_no_validation_messages(&gpu);
}

/// The coarse level of `t`, read back.
fn coarse_of(t: &mut Document) -> Vec<[f32; 4]> {
    let field = t.store.height_mut();
    field
        .coarse()
        .unwrap()
        .expect("a coarse level")
        .read()
        .unwrap()
}

#[test]
fn opening_a_project_reads_its_coarse_level_not_its_pages() {
    use scarp::pages::geometry::PageId;
    let gpu = gpu();
    let tables = NoiseTables::new(2009);
    let dir = tempfile::tempdir().unwrap();
    for format in [HeightFormat::R32f, HeightFormat::R16] {
        let d = doc(format);
        let mut t = Document::from_heights(&gpu, d, &hills(&d), &tables).unwrap();
        dab(&mut t, &[(100.0, 100.0), (200.0, 150.0)], 30.0);
        let want = coarse_of(&mut t);
        let path = dir.path().join(format!("{format:?}.scarp"));
        let r = save_whole(&mut t, &path);
        assert_eq!(r.coarse_written, 1, "{r:?}");
        let whole = dir.path().join(format!("{format:?}-chunk.scarp"));
        save_whole(&mut t, &whole);
        let dense = t.to_dense().unwrap();
        // Every page record damaged: the coarse level still opens, the heights do not.
        let sp = project::v2::open(&path).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        for (_, loc) in &sp.pages {
            bytes[loc.offset as usize + 5] ^= 0x5a;
        }
        std::fs::write(&path, &bytes).unwrap();
        let mut back = reopen(&gpu, &path);
        assert!(coarse_of(&mut back) == want, "{format:?}: the stored level");
        let e = back.to_dense().unwrap_err().to_string();
        assert!(e.contains("checksum"), "{e}");
        // A damaged chunk with sound pages: the project opens, the level is made from them.
        let at = project::v2::open(&whole).unwrap().coarse[0].1.offset as usize;
        let mut bytes = std::fs::read(&whole).unwrap();
        bytes[at + 7] ^= 0x5a;
        std::fs::write(&whole, &bytes).unwrap();
        let mut back = reopen(&gpu, &whole);
        assert!(
            coarse_of(&mut back) == want,
            "{format:?}: made from the pages"
        );
        assert!(back.to_dense().unwrap() == dense);

        // A file saved without the level (as the first version-2 files were) makes it from the
        // pages.
        let plain = dir.path().join(format!("{format:?}-plain.scarp"));
        let pages: Vec<project::v2::PageToSave> = t
            .page_heights()
            .unwrap()
            .iter()
            .map(|(id, _)| project::v2::PageToSave {
                id: *id,
                saved: None,
            })
            .collect();
        let heights: std::collections::HashMap<PageId, Vec<f32>> =
            t.page_heights().unwrap().into_iter().collect();
        let read = |_: usize, ids: &[PageId]| {
            Ok(ids
                .iter()
                .map(|id| scarp::pages::geometry::encode(&d, &heights[id]))
                .collect())
        };
        let meta = meta_of(&t, vec![], &[]).unwrap();
        let (_, r) = project::v2::save(&plain, &meta, &pages, &[], None, read, None, None).unwrap();
        assert_eq!(r.coarse_written, 0);
        assert!(
            coarse_of(&mut reopen(&gpu, &plain)) == want,
            "{format:?}: made from pages"
        );
    }
    assert_no_validation_messages(&gpu);
}

/// A raise stroke of `radius` through `points`.
fn dab(t: &mut Document, points: &[(f32, f32)], radius: f32) {
    let b = BrushSettings {
        radius,
        strength: 0.3,
        ..BrushSettings::new(BrushType::Raise)
    };
    let samples: Vec<StrokeSample> = points
        .iter()
        .enumerate()
        .map(|(i, &(x, y))| StrokeSample {
            x,
            y,
            pressure: 1.0,
            t: i as f32,
        })
        .collect();
    t.apply_stroke(&b, &scarp::brush::stroke::stroke_instances(&b, &samples))
        .unwrap();
}

#[test]
fn a_huge_sparse_document_saves_small_and_reopens_lazily() {
    let gpu = gpu();
    let tables = NoiseTables::new(2009);
    let dir = tempfile::tempdir().unwrap();
    let d = DocumentDesc {
        width: 65536,
        height: 65536,
        format: HeightFormat::R32f,
        page_size: 256,
        height_min: 0.0,
        height_max: 1.0,
        units: Default::default(),
    };
    let mut t = Document::new(&gpu, d, 0.1, &tables).unwrap();
    let spots = [(300.0, 300.0), (40000.0, 1000.0), (65000.0, 65000.0)];
    for &(x, y) in &spots {
        dab(&mut t, &[(x, y)], 20.0);
    }
    let path = dir.path().join("huge.scarp");
    let r = save_whole(&mut t, &path);
    let page = 256 * 256 * 4;
    // A chunk of the coarse level: 128² texels of 16 bytes.
    let chunk = 128 * 128 * 16;
    assert!(r.pages >= 3 && r.pages <= 12, "{r:?}");
    // A chunk spans 8192² texels: 32² pages of 256².
    let chunks: std::collections::BTreeSet<(u32, u32)> = project::v2::open(&path)
        .unwrap()
        .pages
        .iter()
        .map(|(id, _)| (id.x / 32, id.y / 32))
        .collect();
    assert_eq!(r.coarse_written, chunks.len(), "{r:?}");
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(
        size <= r.pages as u64 * page + chunks.len() as u64 * chunk + 64 * 1024,
        "{size} bytes for {} pages",
        r.pages
    );
    let (mut back, meta, file) = open_project_file(&gpu, &path, &tables).unwrap();
    assert_eq!(back.memory().gpu_pages, 0);
    for &(x, y) in &spots {
        let (x, y) = (x as i32, y as i32);
        assert_eq!(back.height_at(x, y).unwrap(), t.height_at(x, y).unwrap());
        assert!(back.height_at(x, y).unwrap() > 0.1);
    }
    assert_eq!(back.height_at(20000, 20000).unwrap(), 0.1, "flat elsewhere");
    let want = coarse_of(&mut t);
    assert!(coarse_of(&mut back) == want, "the coarse level reopens");
    // One more stroke inside one page: the save appends that page, its chunk of the coarse
    // level and an index.
    dab(&mut back, &[(30000.0, 30000.0)], 20.0);
    let r2 = save_document(&mut back, &path, &meta, file.as_ref(), None)
        .unwrap()
        .1;
    assert!(r2.incremental, "{r2:?}");
    assert_eq!(
        (r2.pages, r2.pages_written, r2.coarse_written),
        (r.pages + 1, 1, 1)
    );
    let grown = std::fs::metadata(&path).unwrap().len();
    assert!(
        grown <= size + page + chunk + 64 * 1024,
        "{size} -> {grown}"
    );
    let painted = coarse_of(&mut back);
    assert!(coarse_of(&mut reopen(&gpu, &path)) == painted);
    assert_no_validation_messages(&gpu);
}

#[test]
fn an_incremental_save_writes_only_changed_pages_and_an_interrupted_one_changes_nothing() {
    let gpu = gpu();
    let tables = NoiseTables::new(2009);
    let dir = tempfile::tempdir().unwrap();
    let d = DocumentDesc {
        width: 1024,
        height: 1024,
        format: HeightFormat::R32f,
        page_size: 128,
        height_min: 0.0,
        height_max: 1.0,
        units: Default::default(),
    };
    let path = dir.path().join("inc.scarp");
    let mut t = Document::from_heights(&gpu, d, &hills(&d), &tables).unwrap();
    let first = save_whole(&mut t, &path);
    assert_eq!((first.pages, first.pages_written), (64, 64));
    let saved_a = t.to_dense().unwrap();
    let size_a = std::fs::metadata(&path).unwrap().len();

    // Reopened, one small stroke inside page (2,3), saved into the same file.
    let (mut s, meta, file) = open_project_file(&gpu, &path, &tables).unwrap();
    dab(&mut s, &[(2.0 * 128.0 + 64.0, 3.0 * 128.0 + 64.0)], 10.0);
    let (file_b, r) = save_document(&mut s, &path, &meta, file.as_ref(), None).unwrap();
    assert!(r.incremental, "{r:?}");
    assert_eq!((r.pages_written, r.coarse_written), (1, 1), "{r:?}");
    let size_b = std::fs::metadata(&path).unwrap().len();
    assert_eq!(
        size_b - size_a + 48,
        r.bytes_written,
        "the file grew by what was written"
    );
    assert!(
        r.bytes_written <= 2 * 128 * 128 * 4 + 16 * 1024,
        "{} bytes for one page",
        r.bytes_written
    );
    let saved_b = s.to_dense().unwrap();
    assert!(reopen(&gpu, &path).to_dense().unwrap() == saved_b);
    assert!(saved_b != saved_a);
    // Saving again with nothing changed writes no page and no chunk.
    let (file_b, r) = save_document(&mut s, &path, &meta, Some(&file_b), None).unwrap();
    assert_eq!((r.pages_written, r.coarse_written), (0, 0), "{r:?}");

    // A large stroke, and a save that fails after two pages: the file still holds save B.
    dab(&mut s, &[(50.0, 50.0), (1000.0, 1000.0)], 60.0);
    let e = save_document(&mut s, &path, &meta, Some(&file_b), Some(2))
        .unwrap_err()
        .to_string();
    assert!(e.contains("interrupted"), "{e}");
    assert!(
        reopen(&gpu, &path).to_dense().unwrap() == saved_b,
        "save B survives"
    );
    // The next save succeeds (the dead records of the failed one are cut off first).
    let (file_c, r) = save_document(&mut s, &path, &meta, Some(&file_b), None).unwrap();
    assert!(r.incremental && r.pages_written >= 8, "{r:?}");
    let saved_c = s.to_dense().unwrap();
    assert!(reopen(&gpu, &path).to_dense().unwrap() == saved_c);
    // A writer holding an older save (B) of the file, as one that took no lock would, is refused
    // naming both saves, and the file keeps save C (belt and braces beside the write lock).
    let before = std::fs::read(&path).unwrap();
    let e = save_document(&mut s, &path, &meta, Some(&file_b), None)
        .unwrap_err()
        .to_string();
    let (theirs, ours) = (file_c.save_number(), file_b.save_number());
    assert!(
        e.contains(&format!("holds save #{theirs}")) && e.contains(&format!("opened save #{ours}")),
        "{e}"
    );
    assert!(std::fs::read(&path).unwrap() == before, "the file changed");
    // A torn superblock (the crash hit its write): the file is refused, naming the damage and
    // the previous save (issue 35: never a silent roll-back); accepted, the previous save opens.
    let mut bytes = std::fs::read(&path).unwrap();
    let slot = if file_c.identity() >> 32 == 3 { 16 } else { 64 };
    bytes[slot + 5] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let e = match open_project_file(&gpu, &path, &NoiseTables::new(2009)) {
        Ok(_) => panic!("a torn newest save opened silently"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("newest save") && e.contains("is intact"), "{e}");
    project::set_accept_older(true);
    assert!(
        reopen(&gpu, &path).to_dense().unwrap() == saved_b,
        "torn: save B opens"
    );
    // A whole save after an interruption leaves the old file too.
    let e = save_document(&mut s, &path, &meta, None, Some(3))
        .unwrap_err()
        .to_string();
    assert!(e.contains("interrupted"), "{e}");
    assert!(reopen(&gpu, &path).to_dense().unwrap() == saved_b);
    project::set_accept_older(false);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary left"
    );
    assert_no_validation_messages(&gpu);
}

#[test]
fn a_crashed_session_is_recovered_bit_for_bit() {
    let gpu = gpu();
    let tables = NoiseTables::new(2009);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("work.scarp");
    let d = doc(HeightFormat::R32f);
    {
        let mut t = Document::from_heights(&gpu, d, &hills(&d), &tables).unwrap();
        save_whole(&mut t, &path);
    }
    // The session after the save: strokes painted live, an undo, more strokes; the recovery
    // journal rewritten after every step, as the editor does.
    let mut session = reopen(&gpu, &path);
    let mut steps: Vec<Step> = Vec::new();
    let mut noise = BrushSettings::new(BrushType::Noise);
    noise.noise.kind = NoiseKind::Jordan;
    noise.radius = 40.0;
    noise.strength = 0.2;
    let mut smooth = BrushSettings::new(BrushType::Smooth);
    smooth.radius = 25.0;
    let mut raise = BrushSettings::new(BrushType::Raise);
    raise.radius = 60.0;
    let mut tools = Tools::default();
    for (k, brush) in [noise, raise.clone(), smooth, raise]
        .into_iter()
        .enumerate()
    {
        let mut stroke = LiveStroke::new(brush);
        for i in 0..12 {
            let t = i as f32 / 11.0;
            stroke
                .add(
                    &mut session,
                    &mut tools,
                    StrokeSample {
                        x: 40.0 + 200.0 * t,
                        y: 50.0 + 30.0 * k as f32 + 60.0 * (t * 5.0).sin(),
                        pressure: 1.0,
                        t,
                    },
                )
                .unwrap();
            session.pump(Some(0.1)).unwrap();
        }
        let (step, _) = stroke.finish(&mut session, &mut tools).unwrap();
        steps.push(step.unwrap());
        if k == 1 {
            assert!(session.undo().unwrap());
            steps.push(Step::Undo(1));
        }
        let r = recovery_of(&path, &d, session.flat(), &steps).unwrap();
        project::write_recovery(&path, &r).unwrap();
    }
    let at_crash = session.to_dense().unwrap();
    drop(session); // the crash: nothing saved since

    let r = project::read_recovery(&path)
        .unwrap()
        .expect("a recovery file");
    let mut recovered = reopen(&gpu, &path);
    let (replayed, failed) =
        replay_recovery(&mut recovered, &mut Tools::default(), &r, dir.path()).unwrap();
    assert_eq!(failed, None);
    assert_eq!(replayed.len(), steps.len());
    assert!(recovered.to_dense().unwrap() == at_crash);
    assert_no_validation_messages(&gpu);
}

/// A recovery journal one of whose steps cannot run (a layer whose file is gone) is replayed up
/// to that step: the steps before it stay in the session, which journals them again,
/// the failure is named, and the recovery file as it was is kept beside the project.
#[test]
fn a_recovery_stops_at_a_failing_step_and_keeps_the_steps_before_it() {
    let gpu = gpu();
    let tables = NoiseTables::new(2009);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("work.scarp");
    let d = doc(HeightFormat::R32f);
    let mut raise = BrushSettings::new(BrushType::Raise);
    raise.radius = 50.0;
    let samples: Vec<StrokeSample> = (0..5)
        .map(|i| StrokeSample {
            x: 60.0 + 40.0 * i as f32,
            y: 120.0,
            pressure: 1.0,
            t: 0.1 * i as f32,
        })
        .collect();
    let stroke = Step::Stroke {
        brush: raise.clone(),
        samples: samples.clone(),
    };
    let want = {
        let mut t = Document::from_heights(&gpu, d, &hills(&d), &tables).unwrap();
        save_whole(&mut t, &path);
        let instances = scarp::brush::stroke::stroke_instances(&raise, &samples);
        t.apply_stroke(&raise, &instances).unwrap();
        t.to_dense().unwrap()
    };
    let layer = scarp::layers::LayerOp::Add {
        name: "from a file".into(),
        mode: scarp::layers::Mode::Add,
        opacity: 1.0,
        files: scarp::layers::LayerFiles {
            value: Some("gone.png".into()),
            ..Default::default()
        },
    };
    let steps = vec![stroke.clone(), Step::Layer(layer), stroke];
    let r = recovery_of(&path, &d, 0.0, &steps).unwrap();
    project::write_recovery(&path, &r).unwrap();

    let (mut session, _, offer) =
        scarp::session::Session::open(&gpu, &path, &tables, false).unwrap();
    assert_eq!(offer, Some((3, None)));
    let recovered = session.recover().unwrap();
    assert_eq!(recovered.steps, 1);
    let why = recovered.failed.expect("the layer step fails");
    assert!(
        why.contains("steps[1]") && why.contains("gone.png"),
        "{why}"
    );
    assert!(why.contains(".unapplied"), "{why}");
    assert_eq!(session.steps().len(), 1);
    assert!(
        session.doc.to_dense().unwrap() == want,
        "the first step stays"
    );
    // The recovery file now holds the step replayed; every step is kept beside it.
    let again = project::read_recovery(&path).unwrap().unwrap();
    assert_eq!(again.journal.steps.len(), 1);
    let mut kept = project::recovery_path(&path).into_os_string();
    kept.push(".unapplied");
    let kept: scarp::project::Recovery =
        serde_json::from_str(&std::fs::read_to_string(kept).unwrap()).unwrap();
    assert_eq!(kept.journal.steps.len(), 3);
    assert_no_validation_messages(&gpu);
}

/// A page holding a non-finite height is never saved: the save fails naming the texel and the
/// value, and the project keeps its previous save byte for byte.
#[test]
fn a_page_holding_a_non_finite_height_is_not_saved_and_the_previous_save_stays() {
    use scarp::pages::geometry::encode;
    use scarp::pages::geometry::PageId;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("n.scarp");
    let d = common::doc(256, 256, 128);
    let meta = project::Meta {
        document: d,
        flat: 0.0,
        presets: vec![],
        journal: None,
        layers: None,
        view: None,
        paints_uplift: false,
    };
    let pages = [project::v2::PageToSave {
        id: PageId { x: 1, y: 0 },
        saved: None,
    }];
    let page = |bad: Option<(usize, f32)>| {
        move |_: usize, ids: &[PageId]| -> Result<Vec<Vec<u8>>, String> {
            let mut values = vec![0.5f32; 128 * 128];
            if let Some((i, v)) = bad {
                values[i] = v;
            }
            Ok(ids.iter().map(|_| encode(&d, &values)).collect())
        }
    };
    project::v2::save(&path, &meta, &pages, &[], None, page(None), None, None).unwrap();
    let before = std::fs::read(&path).unwrap();
    for v in [f32::NAN, f32::INFINITY] {
        let e = project::v2::save(
            &path,
            &meta,
            &pages,
            &[],
            None,
            page(Some((5 * 128 + 3, v))),
            None,
            None,
        )
        .expect_err("refused")
        .to_string();
        assert!(
            e.contains(&format!("non-finite height ({v}) at texel (131, 5)"))
                && e.contains("previous save is intact"),
            "{e}"
        );
        assert!(std::fs::read(&path).unwrap() == before, "the file changed");
    }
}

/// A coarse chunk that fails its checksum is said (one line naming the file and the chunk) and
/// the level is made from the pages: the render still succeeds.
#[test]
fn a_damaged_coarse_chunk_is_reported_and_the_pages_stand_in() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("j.json");
    std::fs::write(
        &journal,
        r#"{"version": 2, "document": {"width": 300, "height": 200, "page_size": 128},
            "steps": [{"stroke": {"brush": {"type": "raise", "radius": 60, "strength": 0.5},
                      "samples": [{"x": 100, "y": 100, "pressure": 1.0, "t": 0.0}]}}]}"#,
    )
    .unwrap();
    let path = dir.path().join("p.scarp");
    let s = |p: &std::path::Path| p.to_str().unwrap().to_string();
    common::scarp_ok(&["apply", "--journal", &s(&journal), "--out", &s(&path)]);
    let render = |out: &str| {
        common::scarp_ok(&[
            "render",
            "--heights",
            &s(&path),
            "--image",
            "64x36",
            "--out",
            &s(&dir.path().join(out)),
        ])
    };
    let sound = common::stderr(&render("a.png"));
    assert!(!sound.contains("coarse chunk"), "{sound}");
    let chunks = project::v2::open(&path).unwrap().coarse;
    assert!(!chunks.is_empty(), "the project stores its coarse level");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[chunks[0].1.offset as usize + 3] ^= 0x5a;
    std::fs::write(&path, &bytes).unwrap();
    let err = common::stderr(&render("b.png"));
    let line = err
        .lines()
        .find(|l| l.contains("coarse chunk"))
        .unwrap_or_else(|| panic!("no line names the chunk: {err}"));
    assert!(
        line.contains("p.scarp") && line.contains("from the pages"),
        "{line}"
    );
}

/// How the document is seen is kept: a journal's `view` block opens with it, a save writes the
/// session's view into the project and a reopen brings it back; a bad view is refused by field.
#[test]
fn the_view_is_saved_in_the_project_and_a_journals_view_opens_with_it() {
    use scarp::render::saved_view::SavedView;
    use scarp::session::Session;
    let gpu = gpu();
    let tables = NoiseTables::default();
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("seen.json");
    let view = r#"{"camera": {"fly": true, "target": [100, 5, 80], "distance": 250,
        "yaw_degrees": 30, "pitch_degrees": 20, "position": [10, 60, 10], "fov_y_degrees": 50},
        "vertical_scale": 40, "sun": {"azimuth": 135, "elevation": 25}, "sea_level": 0.1,
        "altitude_range": [0.0, 0.8], "contours": 0.05}"#;
    let write = |view: &str| {
        std::fs::write(
            &journal,
            format!(
                r#"{{"version": 2, "document": {{"width": 200, "height": 160, "page_size": 128}},
                    "steps": [], "view": {view}}}"#
            ),
        )
        .unwrap();
    };
    write(view);
    let (mut session, _, _) = Session::open(&gpu, &journal, &tables, false).unwrap();
    let seen: SavedView = *session.view().expect("the journal's view");
    assert!(seen.camera.fly && seen.camera.target == [100.0, 5.0, 80.0]);
    assert_eq!(seen.sun.map(|s| s.azimuth), Some(135.0));
    assert_eq!(seen.sea_level, Some(0.1));

    // The editor sets what it shows before a save; the project keeps it.
    let shown = SavedView {
        vertical_scale: 55.0,
        sea_level: None,
        ..seen
    };
    session.set_view(shown);
    let project = dir.path().join("seen.scarp");
    let current = scarp::journal::BrushEntry::of(&BrushSettings::new(BrushType::Raise));
    session.save_project(&project, current).unwrap();
    drop(session);
    assert_eq!(project::open(&project).unwrap().meta().view, Some(shown));
    let (reopened, _, _) = Session::open(&gpu, &project, &tables, false).unwrap();
    assert_eq!(reopened.view(), Some(&shown));
    drop(reopened);

    // A view out of range is one error naming the field.
    write(&view.replace(r#""elevation": 25"#, r#""elevation": 0"#));
    let e = match Session::open(&gpu, &journal, &tables, false) {
        Ok(_) => panic!("a sun at 0 degrees opened"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("view.sun") && e.contains("elevation"), "{e}");
    assert_no_validation_messages(&gpu);
}

/// With frames in flight, the saved pages next to those a stroke's waves bring in are read ahead
/// of need, off the painting thread: a second stroke into them reads nothing from the file, and
/// the heights equal those of the same strokes with every page read when it is wanted.
#[test]
fn saved_pages_next_to_a_stroke_are_read_ahead_with_frames_in_flight() {
    let gpu = gpu();
    let tables = NoiseTables::new(2009);
    let dir = tempfile::tempdir().unwrap();
    // 8 x 4 pages of 128.
    let d = DocumentDesc {
        width: 1024,
        height: 512,
        ..doc(HeightFormat::R32f)
    };
    let mut t = Document::from_heights(&gpu, d, &hills(&d), &tables).unwrap();
    let path = dir.path().join("near.scarp");
    save_whole(&mut t, &path);
    // The first stroke lies in page (2, 1), the second in the next one east.
    let first = [(300.0, 200.0), (320.0, 200.0)];
    let second = [(420.0, 200.0), (440.0, 200.0)];
    let mut plain = reopen(&gpu, &path);
    dab(&mut plain, &first, 30.0);
    dab(&mut plain, &second, 30.0);
    let mut live = reopen(&gpu, &path);
    live.set_frames_in_flight(true);
    dab(&mut live, &first, 30.0);
    // Wait for the reads (a call that changes residency takes those that arrived).
    common::poll_until("the reads ahead", || {
        live.store.height_mut().bring_in(&[], &[], 0).unwrap();
        live.store.height().places().reading_ahead() == 0
    });
    let before = live.memory().traffic;
    assert!(
        before.pages_read > 0 && before.pages_read_ahead > 0,
        "{before:?}"
    );
    dab(&mut live, &second, 30.0);
    let after = live.memory().traffic;
    assert_eq!(
        after.pages_read, before.pages_read,
        "the second stroke's page was read ahead: {after:?}"
    );
    live.set_frames_in_flight(false);
    assert!(live.to_dense().unwrap() == plain.to_dense().unwrap());
    assert_no_validation_messages(&gpu);
}

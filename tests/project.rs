//! Project files on the GPU engine (lavapipe in CI, validation on): a saved project reopens to
//! the same heights (r32f and r16), and a session that crashed after its last save is recovered
//! by replaying its recovery journal onto that save — bit for bit.

mod common;

use common::{assert_no_validation_messages, gpu};
use scarp::brush::journal::RecordedStep;
use scarp::brush::stroke::StrokeSample;
use scarp::brush::{BrushSettings, BrushType};
use scarp::noise::{NoiseKind, NoiseTables};
use scarp::pages::geometry::{DocumentDesc, HeightFormat};
use scarp::session::Document;
use scarp::session::LiveStroke;
use scarp::session::{open_project, project_of, recovery_of, replay_recovery};
use scarp::terrain::project;

fn doc(format: HeightFormat) -> DocumentDesc {
    DocumentDesc {
        width: 300,
        height: 260,
        format,
        page_size: 128,
        height_min: -1.0,
        height_max: 2.0,
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
        let p = project_of(&mut t, vec![], &[]).unwrap();
        project::save(&path, &p).unwrap();
        let loaded = project::load(&path).unwrap();
        assert_eq!(loaded.document, d);
        let mut back = open_project(&gpu, &loaded, &tables).unwrap();
        assert!(back.to_dense().unwrap() == before, "{format:?}");
    }
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
        project::save(&path, &project_of(&mut t, vec![], &[]).unwrap()).unwrap();
    }
    // The session after the save: strokes painted live, an undo, more strokes; the recovery
    // journal rewritten after every step, as the editor does.
    let mut session = open_project(&gpu, &project::load(&path).unwrap(), &tables).unwrap();
    let mut steps: Vec<RecordedStep> = Vec::new();
    let mut noise = BrushSettings::new(BrushType::Noise);
    noise.noise.kind = NoiseKind::Jordan;
    noise.radius = 40.0;
    noise.strength = 0.2;
    let mut smooth = BrushSettings::new(BrushType::Smooth);
    smooth.radius = 25.0;
    let mut raise = BrushSettings::new(BrushType::Raise);
    raise.radius = 60.0;
    for (k, brush) in [noise, raise.clone(), smooth, raise]
        .into_iter()
        .enumerate()
    {
        let mut stroke = LiveStroke::new(brush);
        for i in 0..12 {
            let t = i as f32 / 11.0;
            stroke.add(
                &mut session,
                StrokeSample {
                    x: 40.0 + 200.0 * t,
                    y: 50.0 + 30.0 * k as f32 + 60.0 * (t * 5.0).sin(),
                    pressure: 1.0,
                    t,
                },
            );
            session.pump(Some(0.1)).unwrap();
        }
        let (step, _) = stroke.finish(&mut session);
        steps.push(step.unwrap());
        if k == 1 {
            assert!(session.undo().unwrap());
            steps.push(RecordedStep::Undo);
        }
        let r = recovery_of(&path, &d, session.flat(), &steps).unwrap();
        project::write_recovery(&path, &r).unwrap();
    }
    let at_crash = session.to_dense().unwrap();
    drop(session); // the crash: nothing saved since

    let r = project::read_recovery(&path)
        .unwrap()
        .expect("a recovery file");
    let mut recovered = open_project(&gpu, &project::load(&path).unwrap(), &tables).unwrap();
    let replayed = replay_recovery(&mut recovered, &r, dir.path()).unwrap();
    assert_eq!(replayed.len(), steps.len());
    assert!(recovered.to_dense().unwrap() == at_crash);
    assert_no_validation_messages(&gpu);
}

//! Every journal shipped in assets/ (up to 4096² texels: the larger ones are the NVIDIA
//! benchmarks' same steps at scale) replays to the same heights bit for bit:
//! - on the CPU twin, to the digests recorded in tests/golden/journal-digests.txt (journals of
//!   one height field; `SCARP_UPDATE_GOLDEN=1` rewrites the file), so a change to the journal's
//!   types, its checks or the replay that moves one texel fails here;
//! - on the GPU, through the journal file as shipped and through the file Scarp writes of it
//!   (the journals of assets/journals itself, layers included: the benchmarks' journals hold
//!   the same kinds of step).

mod common;

use common::{assert_no_validation_messages, gpu};
use scarp::brush::cpu::CpuTerrain;
use scarp::journal::{Initial, Journal, JournalFile, Step};
use scarp::noise::{CpuTables, NoiseTables};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Largest document side replayed here.
const MAX_SIDE: u32 = 4096;

/// The shipped journals small enough to replay on lavapipe, sorted.
fn shipped() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "json") {
                out.push(p);
            }
        }
    }
    let mut all = Vec::new();
    walk(&root().join("assets/journals"), &mut all);
    all.sort();
    all.into_iter()
        .filter(|p| {
            let d = Journal::load(p).unwrap().document;
            d.width.max(d.height) <= MAX_SIDE
        })
        .collect()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The journal's name relative to the crate (the digest file's key).
fn key(p: &Path) -> String {
    p.strip_prefix(root()).unwrap().display().to_string()
}

/// FNV-1a over the values' bits.
fn digest(values: &[f32]) -> u64 {
    values.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, v| {
        v.to_bits()
            .to_le_bytes()
            .iter()
            .fold(h, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
    })
}

/// The CPU twin's heights after every step (None for a journal with layer steps).
fn twin_replay(j: &Journal, tables: &Arc<CpuTables>) -> Option<Vec<f32>> {
    if j.steps.iter().any(|s| matches!(s, Step::Layer(_))) {
        return None;
    }
    let d = j.document;
    let start = match (&j.initial, j.initial_heights().unwrap()) {
        (_, Some(h)) => h,
        (Initial::Flat(h), None) => vec![*h; d.width as usize * d.height as usize],
        (other, None) => panic!("no heights for {other:?}"),
    };
    let mut twin = CpuTerrain::from_heights(d, &start, tables.clone());
    j.replay(&mut twin, |_, _| {}).unwrap();
    Some(twin.to_dense())
}

#[test]
fn every_shipped_journal_replays_on_the_cpu_twin_to_its_recorded_digest() {
    let tables = NoiseTables::new(1);
    let cpu = Arc::new(CpuTables::new(&tables));
    let mut got = BTreeMap::new();
    for path in shipped() {
        let j = Journal::load(&path).unwrap();
        if let Some(h) = twin_replay(&j, &cpu) {
            got.insert(key(&path), format!("{:016x}", digest(&h)));
        }
    }
    assert!(got.len() >= 10, "only {} journals replayed", got.len());
    let file = root().join("tests/golden/journal-digests.txt");
    let text: String = got.iter().map(|(k, v)| format!("{v}  {k}\n")).collect();
    if std::env::var_os("SCARP_UPDATE_GOLDEN").is_some() {
        std::fs::write(&file, &text).unwrap();
    }
    let recorded = std::fs::read_to_string(&file).unwrap();
    let recorded: BTreeMap<String, String> = recorded
        .lines()
        .map(|l| {
            let (v, k) = l.split_once("  ").unwrap();
            (k.to_string(), v.to_string())
        })
        .collect();
    assert_eq!(
        got, recorded,
        "CPU replays differ from the recorded digests"
    );
}

#[test]
fn every_shipped_journal_replays_on_the_gpu_the_same_through_the_file_scarp_writes() {
    let gpu = gpu();
    let tables = NoiseTables::new(1);
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    let top = root().join("assets/journals");
    for path in shipped().into_iter().filter(|p| p.parent() == Some(&top)) {
        let shipped = scarp::session::replay_journal(&gpu, &path, &tables)
            .unwrap()
            .to_dense()
            .unwrap();
        let j = Journal::load(&path).unwrap();
        let steps = &j.steps;
        let written = JournalFile::of(&j.document, &j.initial, steps)
            .unwrap()
            .to_json()
            .unwrap();
        let again = dir.path().join(path.file_name().unwrap());
        std::fs::write(&again, written).unwrap();
        let rewritten = scarp::session::replay_journal(&gpu, &again, &tables)
            .unwrap()
            .to_dense()
            .unwrap();
        assert!(
            digest(&shipped) == digest(&rewritten) && shipped == rewritten,
            "{}: the rewritten journal replays differently",
            key(&path)
        );
        // Printed for comparing replays across changes (`-- --nocapture`).
        eprintln!("gpu {:016x}  {}", digest(&shipped), key(&path));
        checked += 1;
    }
    assert!(checked >= 6, "only {checked} journals replayed");
    assert_no_validation_messages(&gpu);
}

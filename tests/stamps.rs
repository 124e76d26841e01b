//! The stamp library (assets/stamps): every stamp is what its journal makes, loads as a stamp,
//! and is zero along its border (a stamp adds nothing at the brush's edge).

mod common;

use common::scarp_ok;
use std::path::{Path, PathBuf};

fn library() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/stamps")
}

fn gray16(path: &Path) -> image::ImageBuffer<image::Luma<u16>, Vec<u16>> {
    image::open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .to_luma16()
}

#[test]
fn each_stamp_is_its_journal_replayed_and_fades_to_zero_at_its_border() {
    let mut journals: Vec<PathBuf> = std::fs::read_dir(library().join("src"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    journals.sort();
    let names: Vec<String> = journals
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    for want in [
        "crater",
        "mesa",
        "volcano",
        "dune-field",
        "canyon",
        "ridge-line",
        "plateau",
        "rock",
    ] {
        assert!(names.iter().any(|n| n == want), "no stamp journal {want}");
    }
    let dir = tempfile::tempdir().unwrap();
    for (journal, name) in journals.iter().zip(&names) {
        let made = dir.path().join(format!("{name}.png"));
        scarp_ok(&[
            "apply",
            "--journal",
            journal.to_str().unwrap(),
            "--out",
            made.to_str().unwrap(),
        ]);
        let bundled = library().join(format!("{name}.png"));
        let (a, b) = (gray16(&made), gray16(&bundled));
        assert_eq!(a.dimensions(), b.dimensions(), "{name}");
        let worst = a
            .as_raw()
            .iter()
            .zip(b.as_raw())
            .map(|(x, y)| x.abs_diff(*y))
            .max()
            .unwrap();
        assert!(
            worst <= 2,
            "{name}: the journal gives a different stamp (up to {worst} levels off)"
        );
        // 16 bits used in full, and nothing along the border.
        assert_eq!(b.as_raw().iter().max(), Some(&65535), "{name}");
        let (w, h) = b.dimensions();
        let border = (0..w)
            .flat_map(|x| [(x, 0), (x, h - 1)])
            .chain((0..h).flat_map(|y| [(0, y), (w - 1, y)]))
            .map(|(x, y)| b.get_pixel(x, y)[0])
            .max()
            .unwrap();
        assert!(
            border < 650,
            "{name}: {border} on its border (more than 1% of its peak)"
        );
        let stamp = scarp::brush::stamp::Stamp::load(&bundled, None).unwrap();
        assert_eq!((stamp.width, stamp.height), (w, h));
    }
}

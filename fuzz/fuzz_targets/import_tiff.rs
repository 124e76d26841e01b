//! Any bytes read as a .tiff height file: an error or heights within the limits, never a panic,
//! a hang or an allocation past the limits.
#![no_main]
use libfuzzer_sys::fuzz_target;
use scarp::terrain::formats::{read_bytes, FileKind, ReadOptions, MAX_TEXELS};

fuzz_target!(|data: &[u8]| {
    if let Ok(h) = read_bytes(data, FileKind::Tiff, &ReadOptions::default()) {
        assert!(u64::from(h.width) * u64::from(h.height) <= MAX_TEXELS);
        assert_eq!(h.values.len(), h.width as usize * h.height as usize);
        assert!(h.values.iter().all(|v| v.is_finite()));
    }
});

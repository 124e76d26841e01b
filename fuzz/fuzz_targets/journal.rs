//! Any text parsed as a stroke journal and as a brush preset: an error naming the problem or a
//! checked journal, never a panic. Relative files resolve in an empty folder.
#![no_main]
use libfuzzer_sys::fuzz_target;
use scarp::journal::{parse_brush, Journal};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let base = Path::new("/nonexistent-scarp-fuzz");
    if let Ok(j) = Journal::parse(text, base) {
        assert!(j.document.validate().is_ok());
    }
    let _ = parse_brush(text, base);
});

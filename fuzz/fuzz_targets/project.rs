//! Any bytes parsed as a .scarp project: an error or a checked project, never a panic or an
//! allocation beyond what the file holds.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = scarp::project::parse(data) {
        assert!(p.document.validate().is_ok());
        assert!(p.pages.iter().all(|(_, h)| h.iter().all(|v| v.is_finite())));
    }
});

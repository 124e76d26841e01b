//! Any bytes read as raw 16-bit (both byte orders) and raw f32 height files, with the size
//! inferred and with a size taken from the first bytes: an error or consistent heights.
#![no_main]
use libfuzzer_sys::fuzz_target;
use scarp::terrain::formats::{read_bytes, Endian, FileKind, ReadOptions};

fuzz_target!(|data: &[u8]| {
    let size = (data.len() >= 4).then(|| {
        (
            u32::from(u16::from_le_bytes([data[0], data[1]])),
            u32::from(u16::from_le_bytes([data[2], data[3]])),
        )
    });
    for (kind, endian) in [
        (FileKind::Raw16, Endian::Little),
        (FileKind::Raw16, Endian::Big),
        (FileKind::R32, Endian::Little),
    ] {
        for size in [None, size] {
            let options = ReadOptions {
                size,
                endian,
                ..Default::default()
            };
            if let Ok(h) = read_bytes(data, kind, &options) {
                assert_eq!(h.values.len(), h.width as usize * h.height as usize);
                assert!(h.values.iter().all(|v| v.is_finite()));
            }
        }
    }
});

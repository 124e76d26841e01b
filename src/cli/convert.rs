//! `scarp convert`: a height file to another format, with progress bars.

use super::args::ReadArgs;
use super::{bar, read_with_bar};
use crate::terrain::export::check_writable;
use anyhow::{bail, Result};
use std::path::Path;
use std::time::Instant;

pub fn run(input: &Path, output: &Path, read: &ReadArgs, bits: Option<u8>) -> Result<()> {
    use crate::terrain::formats::{write_with_progress, WriteOptions};
    check_writable(output).map_err(anyhow::Error::msg)?;
    if input.canonicalize().ok() == output.canonicalize().ok() && output.exists() {
        bail!("{}: input and output are the same file", output.display());
    }
    let t0 = Instant::now();
    let grid = read_with_bar(input, &read.options())?;
    let b = bar(&format!("writing {}", output.display()));
    let report = write_with_progress(
        output,
        &grid,
        &WriteOptions {
            range: read.range,
            endian: read.endian,
            bits,
        },
        &mut |done, total| {
            b.set_length(total);
            b.set_position(done);
        },
    );
    b.finish_and_clear();
    let report = report.map_err(anyhow::Error::msg)?;
    let (lo, hi) = crate::terrain::formats::min_max(&grid.values);
    println!(
        "{} -> {}: {}x{}, heights {lo}..{hi}, {:?} {}-bit{}{} in {:.1} ms",
        input.display(),
        output.display(),
        grid.width,
        grid.height,
        report.kind,
        report.bits,
        report
            .range
            .map(|(a, b)| format!(", range {a}..{b}"))
            .unwrap_or_default(),
        if report.clamped > 0 {
            format!(", {} heights clamped into the range", report.clamped)
        } else {
            String::new()
        },
        t0.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}

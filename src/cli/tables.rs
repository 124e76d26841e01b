//! `scarp tables`: the noise lookup tables as PNGs, the exact bytes the GPU samples.

use crate::atomic_file::write_rgba_png;
use crate::noise::NoiseTables;
use anyhow::{Context as _, Result};
use std::path::Path;

pub fn run(out: &Path, table_seed: u64) -> Result<()> {
    std::fs::create_dir_all(out)
        .with_context(|| format!("{}: cannot create folder", out.display()))?;
    let tables = NoiseTables::new(table_seed);
    for (name, bytes) in [
        ("perm.png", tables.perm_bytes()),
        ("grad.png", tables.grad_bytes()),
    ] {
        let path = out.join(name);
        write_rgba_png(&path, 256, 256, bytes.to_vec()).map_err(anyhow::Error::msg)?;
        println!("{}", path.display());
    }
    Ok(())
}

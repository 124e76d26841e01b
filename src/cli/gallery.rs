//! `scarp gallery`: one image per noise kind and a labelled contact sheet (README's run command
//! without a display).

use super::args::Backend;
use super::{check_validation, open_gpu};
use crate::atomic_file::{write_atomic, write_rgba_png};
use crate::noise::{CpuTables, GpuNoise, NoiseKind, NoiseSettings, NoiseTables};
use crate::terrain::export::write_heights;
use anyhow::{Context as _, Result};
use std::path::Path;
use std::time::Instant;

pub fn run(out: &Path, size: u32, backend: Backend, table_seed: u64) -> Result<()> {
    std::fs::create_dir_all(out)
        .with_context(|| format!("{}: cannot create folder", out.display()))?;
    let tables = NoiseTables::new(table_seed);
    let cpu = CpuTables::new(&tables);
    let mut gpu_noise = match backend {
        Backend::Gpu => {
            let gpu = open_gpu()?;
            println!("device: {}", gpu.info());
            Some(GpuNoise::new(&gpu, &tables)?)
        }
        Backend::Cpu => {
            println!("device: CPU twin, {} threads", rayon::current_num_threads());
            None
        }
    };
    let mut tiles = Vec::new();
    for kind in NoiseKind::ALL {
        let settings = NoiseSettings::new(kind);
        let t0 = Instant::now();
        let heights = match gpu_noise.as_mut() {
            Some(n) => n.generate(&settings, size, size)?.heights,
            None => cpu.generate(kind, &settings.params(), size, size),
        };
        let elapsed = t0.elapsed();
        let path = out.join(format!("{}.png", kind.name()));
        write_heights(&path, size, size, &heights).map_err(anyhow::Error::msg)?;
        println!(
            "{:<8} {size}x{size} in {:>8.1} ms -> {}",
            kind.name(),
            elapsed.as_secs_f64() * 1e3,
            path.display()
        );
        tiles.push((
            kind,
            crate::gallery::relief_tile(&heights, size, crate::gallery::SHEET_TILE.min(size)),
        ));
    }
    if let Some(n) = &gpu_noise {
        check_validation(n.gpu())?;
    }
    let tile = crate::gallery::SHEET_TILE.min(size);
    if tile == crate::gallery::SHEET_TILE {
        let (w, h, rgba) = crate::gallery::contact_sheet(&tiles);
        let path = out.join("contact_sheet.png");
        write_rgba_png(&path, w, h, rgba).map_err(anyhow::Error::msg)?;
        println!("contact sheet -> {}", path.display());
    }
    let index = out.join("index.txt");
    write_atomic(&index, |w| {
        use std::io::Write;
        for kind in NoiseKind::ALL {
            writeln!(
                w,
                "{}.png: {} with default parameters ({size}x{size})",
                kind.name(),
                kind.name()
            )
            .map_err(|e| e.to_string())?;
        }
        Ok::<(), String>(())
    })
    .map_err(anyhow::Error::msg)?;
    Ok(())
}

//! SPIR-V of every shader under `shaders-glsl/`, compiled by `build.rs` and embedded.

use super::error::{GpuError, Result};

/// One compiled shader.
#[derive(Clone, Copy, Debug)]
pub struct Shader {
    /// Path under `shaders-glsl/`.
    pub name: &'static str,
    pub spirv: &'static [u8],
}

impl Shader {
    /// The SPIR-V as aligned 32-bit words.
    pub fn words(&self) -> Result<Vec<u32>> {
        ash::util::read_spv(&mut std::io::Cursor::new(self.spirv))
            .map_err(|e| GpuError::usage(format!("{}: bad SPIR-V: {e}", self.name)))
    }
}

include!(concat!(env!("OUT_DIR"), "/shaders.rs"));

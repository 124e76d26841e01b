//! A [`Mesh`] as glTF 2.0 binary (`.glb`, Khronos glTF 2.0 specification, "GLB File Format
//! Specification"): one scene, one node, one mesh of one indexed triangle primitive with
//! POSITION, NORMAL and TEXCOORD_0, and its one buffer in the binary chunk. Lengths are
//! 32-bit in GLB: a mesh past 4 GiB is refused before anything is written.

use super::Mesh;
use crate::atomic_file::{write_atomic, FileError};
use serde_json::json;
use std::io::Write;
use std::path::Path;

const MAGIC: u32 = 0x4654_6C67; // "glTF"
const CHUNK_JSON: u32 = 0x4E4F_534A; // "JSON"
const CHUNK_BIN: u32 = 0x004E_4942; // "BIN\0"
const FLOAT: u32 = 5126;
const UNSIGNED_INT: u32 = 5125;
const ARRAY_BUFFER: u32 = 34962;
const ELEMENT_ARRAY_BUFFER: u32 = 34963;
const TRIANGLES: u32 = 4;

/// Why a mesh was not written.
#[derive(Debug, thiserror::Error)]
pub enum GlbError {
    #[error(
        "the mesh is {0} bytes, past GLB's 4 GiB: raise --mesh-error or give a smaller --region"
    )]
    TooLarge(u64),
    #[error(transparent)]
    File(#[from] FileError),
}

/// Bytes of `values`' components, little-endian (glTF's byte order).
fn bytes<const N: usize>(values: &[[f32; N]]) -> Vec<u8> {
    values
        .iter()
        .flatten()
        .flat_map(|v| v.to_le_bytes())
        .collect()
}

/// Componentwise lowest and highest of `values`, as glTF's accessor `min` and `max` (exact:
/// each f32 widened, so a reader's float comparison finds them equal).
fn min_max<const N: usize>(values: &[[f32; N]]) -> (Vec<f64>, Vec<f64>) {
    let mut lo = [f32::INFINITY; N];
    let mut hi = [f32::NEG_INFINITY; N];
    for v in values {
        for k in 0..N {
            lo[k] = lo[k].min(v[k]);
            hi[k] = hi[k].max(v[k]);
        }
    }
    (lo.map(f64::from).to_vec(), hi.map(f64::from).to_vec())
}

/// The GLB file of `mesh`, named `name` in its scene.
pub fn glb(mesh: &Mesh, name: &str) -> Result<Vec<u8>, GlbError> {
    let views: [(Vec<u8>, u32); 4] = [
        (bytes(&mesh.positions), ARRAY_BUFFER),
        (bytes(&mesh.normals), ARRAY_BUFFER),
        (bytes(&mesh.uvs), ARRAY_BUFFER),
        (
            mesh.indices.iter().flat_map(|i| i.to_le_bytes()).collect(),
            ELEMENT_ARRAY_BUFFER,
        ),
    ];
    let total: u64 = views.iter().map(|(b, _)| b.len() as u64).sum();
    // Every view's length is a multiple of 4: no padding between them.
    if total + (1 << 16) > u64::from(u32::MAX) {
        return Err(GlbError::TooLarge(total));
    }
    let mut offset = 0usize;
    let buffer_views: Vec<_> = views
        .iter()
        .map(|(b, target)| {
            let v =
                json!({"buffer": 0, "byteOffset": offset, "byteLength": b.len(), "target": target});
            offset += b.len();
            v
        })
        .collect();
    let (pmin, pmax) = min_max(&mesh.positions);
    let n = mesh.positions.len();
    let doc = json!({
        "asset": {"version": "2.0", "generator": concat!("Scarp ", env!("CARGO_PKG_VERSION"))},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0, "name": name}],
        "meshes": [{"name": name, "primitives": [{
            "attributes": {"POSITION": 0, "NORMAL": 1, "TEXCOORD_0": 2},
            "indices": 3,
            "mode": TRIANGLES,
        }]}],
        "buffers": [{"byteLength": total}],
        "bufferViews": buffer_views,
        "accessors": [
            {"bufferView": 0, "componentType": FLOAT, "count": n, "type": "VEC3", "min": pmin, "max": pmax},
            {"bufferView": 1, "componentType": FLOAT, "count": n, "type": "VEC3"},
            {"bufferView": 2, "componentType": FLOAT, "count": n, "type": "VEC2"},
            {"bufferView": 3, "componentType": UNSIGNED_INT, "count": mesh.indices.len(), "type": "SCALAR"},
        ],
    });
    let mut text = serde_json::to_vec(&doc).expect("a JSON value serializes");
    // Chunks are 4-byte aligned: JSON padded with spaces, the binary with zeros.
    text.resize(text.len().next_multiple_of(4), b' ');
    let length = 12 + 8 + text.len() + 8 + total as usize;
    let mut out = Vec::with_capacity(length);
    for word in [MAGIC, 2, length as u32, text.len() as u32, CHUNK_JSON] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    out.extend_from_slice(&text);
    for word in [total as u32, CHUNK_BIN] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    for (b, _) in &views {
        out.extend_from_slice(b);
    }
    Ok(out)
}

/// Writes `mesh` to `path` as GLB, atomically.
pub fn write(mesh: &Mesh, name: &str, path: &Path) -> Result<(), GlbError> {
    let file = glb(mesh, name)?;
    write_atomic(path, |w| {
        w.write_all(&file).map_err(FileError::io(path))?;
        Ok::<_, GlbError>(())
    })
}

//! D8 drainage on the GPU (docs/maps.md, "Drainage on the GPU"): how many texels drain through
//! each texel of a region, itself included, as geology routes them (its receivers kernel: a
//! texel drains to its steepest lower neighbour, the lowest k on ties). A texel's count depends
//! on everything upstream, so no pass can finish a texel from its neighbours; pointer doubling
//! does it in ⌈log₂ n⌉ rounds over the whole region instead of one round per texel of the
//! longest river. Counts are integers added with atomics: the same in any order, bit for bit the
//! CPU twin's ([`twin`]). The drainage area is the count times the texel area.

use crate::geology::cpu::{receivers, NO_RECEIVER, OFFSETS};
use crate::geology::shared::GeologyPush;
use crate::gpu::{
    shaders, Access, BindingKind, Buffer, BufferDesc, ComputeKernel, Gpu, GpuError, GpuTimer,
    Recorder, Resource, Result,
};
use crate::shared_constants::{GEOLOGY_GROUP_X, GEOLOGY_GROUP_Y};
use std::sync::Arc;

/// The rounds that finish every count of an `n`-texel region: round k adds the texels 2^k to
/// 2^(k+1) − 1 steps upstream, and no river is longer than n − 1 steps.
pub fn rounds(n: u64) -> u32 {
    n.max(1).next_power_of_two().trailing_zeros()
}

/// The push constants the passes take: geology's, of which they read the size (and the
/// receivers kernel the texel size).
pub fn push(size: [u32; 2], tau: f32) -> GeologyPush {
    crate::geology::GeologyParams::default().push(size, tau, None)
}

/// The drainage pipelines: geology's receivers (ints), the start and a round of doubling.
pub struct Kernels {
    receivers: ComputeKernel<GeologyPush>,
    init: ComputeKernel<GeologyPush>,
    jump: ComputeKernel<GeologyPush>,
}

impl Kernels {
    pub fn new(gpu: &Arc<Gpu>) -> Result<Self> {
        let k = |shader, n: usize| {
            ComputeKernel::new(gpu, shader, &vec![BindingKind::StorageBuffer; n], &[])
        };
        Ok(Self {
            receivers: k(&shaders::GEOLOGY_RECEIVERS_COMP, 3)?,
            init: k(&shaders::MAPS_DRAINAGE_INIT_COMP, 3)?,
            jump: k(&shaders::MAPS_DRAINAGE_JUMP_COMP, 4)?,
        })
    }

    /// Texels the largest region may have on `gpu`: each buffer is one binding, and a texel's
    /// index and count are 32-bit.
    pub fn max_texels(gpu: &Gpu) -> u64 {
        (u64::from(gpu.info().max_storage_buffer_range) / 4).min(i32::MAX as u64)
    }

    /// The counts of the region of heights `z` (metres, `size` row-major) on texels of `tau`
    /// metres: how many texels drain through each, itself included. With `timer`, the passes
    /// are timed as one, "drainage".
    pub fn counts(
        &self,
        gpu: &Arc<Gpu>,
        z: &[f32],
        size: [u32; 2],
        tau: f32,
        timer: Option<&GpuTimer>,
    ) -> Result<Vec<u32>> {
        let n = u64::from(size[0]) * u64::from(size[1]);
        assert_eq!(z.len() as u64, n, "heights of the region's size");
        if n > Self::max_texels(gpu) {
            return Err(GpuError::Unsupported(format!(
                "a {n}-texel drainage region is past what {} binds at once ({} texels)",
                gpu.info().name,
                Self::max_texels(gpu)
            )));
        }
        let bytes = n.max(1) * 4;
        let storage = |name| Buffer::new(gpu, name, BufferDesc::storage_copyable(bytes));
        let zb = storage("drainage z")?;
        let r = storage("drainage receivers")?;
        // Geology's multi-flow weights: D8 here, so never written.
        let w = Buffer::new(
            gpu,
            "drainage flow weights",
            BufferDesc::storage_copyable(4),
        )?;
        let j = [
            storage("drainage pointers 0")?,
            storage("drainage pointers 1")?,
        ];
        let v = [storage("drainage counts 0")?, storage("drainage counts 1")?];
        let mut upload = Buffer::new(gpu, "drainage upload", BufferDesc::upload(bytes))?;
        let readback = Buffer::new(gpu, "drainage readback", BufferDesc::readback(bytes))?;
        upload.write(z)?;
        let sb = Resource::StorageBuffer;
        let receivers = self.receivers.bind(&[sb(&zb), sb(&r), sb(&w)])?;
        let init = self.init.bind(&[sb(&r), sb(&j[0]), sb(&v[0])])?;
        let jump = [
            self.jump
                .bind(&[sb(&j[0]), sb(&v[0]), sb(&v[1]), sb(&j[1])])?,
            self.jump
                .bind(&[sb(&j[1]), sb(&v[1]), sb(&v[0]), sb(&j[0])])?,
        ];
        let p = push(size, tau);
        let groups = [
            size[0].div_ceil(GEOLOGY_GROUP_X as u32),
            size[1].div_ceil(GEOLOGY_GROUP_Y as u32),
            1,
        ];
        let mut rec = Recorder::new(gpu)?;
        rec.buffer(&upload, Access::HostWrite);
        rec.copy_buffer(&upload, 0, &zb, 0, bytes);
        let query = match timer {
            Some(t) => {
                rec.reset_timer(t);
                Some((t, rec.timer_begin(t, "drainage")?))
            }
            None => None,
        };
        rec.pass(&self.receivers, &receivers)
            .read_buffer(&zb)
            .write_buffer(&r)
            .write_buffer(&w)
            .push(&p)
            .dispatch(groups)?;
        rec.pass(&self.init, &init)
            .read_buffer(&r)
            .write_buffer(&j[0])
            .write_buffer(&v[0])
            .push(&p)
            .dispatch(groups)?;
        let mut c = 0;
        for _ in 0..rounds(n) {
            rec.copy_buffer(&v[c], 0, &v[1 - c], 0, bytes);
            rec.pass(&self.jump, &jump[c])
                .read_buffer(&j[c])
                .read_buffer(&v[c])
                .read_write_buffer(&v[1 - c])
                .write_buffer(&j[1 - c])
                .push(&p)
                .dispatch(groups)?;
            c = 1 - c;
        }
        if let Some((t, q)) = query {
            rec.timer_end(t, q);
        }
        rec.copy_buffer(&v[c], 0, &readback, 0, bytes);
        rec.buffer(&readback, Access::HostRead);
        rec.submit_and_wait()?;
        let counts = bytemuck::cast_slice::<u8, u32>(readback.mapped(bytes as usize)?);
        Ok(counts[..n as usize].to_vec())
    }
}

/// The kernels' CPU twin: the same receivers, start and rounds (each texel adds its count to the
/// texel its pointer names, then doubles its pointer), stopping once every pointer has run out.
pub fn twin(z: &[f32], size: [u32; 2], tau: f32) -> Vec<u32> {
    let p = push(size, tau);
    let w = size[0] as i64;
    let mut j: Vec<i64> = receivers(z, &p)
        .iter()
        .enumerate()
        .map(|(i, &k)| match k == NO_RECEIVER {
            true => -1,
            false => {
                let [dx, dy] = OFFSETS[k as usize];
                i as i64 + i64::from(dy) * w + i64::from(dx)
            }
        })
        .collect();
    let mut v = vec![1u32; z.len()];
    while j.iter().any(|&t| t >= 0) {
        let mut next = v.clone();
        for (i, &t) in j.iter().enumerate() {
            if t >= 0 {
                next[t as usize] += v[i];
            }
        }
        j = j
            .iter()
            .map(|&t| match t >= 0 {
                true => j[t as usize],
                false => -1,
            })
            .collect();
        v = next;
    }
    v
}

/// Drainage areas (m²) of `counts` on texels of area `a0` (the push's: τ² rounded to f32, as
/// geology's accumulation adds it): each count times a0. Exactly `d8_area`'s sums while a count
/// is below 2^29 (a0's 24 bits and the count's fit f64's 53).
pub fn areas(counts: &[u32], a0: f32) -> Vec<f64> {
    counts
        .iter()
        .map(|&c| f64::from(c) * f64::from(a0))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rounds_cover_the_longest_river() {
        assert_eq!(rounds(1), 0);
        assert_eq!(rounds(2), 1);
        assert_eq!(rounds(3), 2);
        assert_eq!(rounds(4), 2);
        assert_eq!(rounds(5), 3);
        assert_eq!(rounds(1 << 24), 24);
    }

    /// The twin's counts times the texel area are geology's exact D8 accumulation (summed from
    /// the highest texel down), on rough ground with pits, a plane, and a ramp whose rows run
    /// in turn one way and back (long rivers).
    #[test]
    fn the_twin_counts_what_geology_accumulates() {
        let (w, h) = (37u32, 23u32);
        let rough: Vec<f32> = (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as f32, (i / w) as f32);
                (x * 0.37).sin() * 5.0 + (y * 0.29).cos() * 4.0 + x * 0.05
            })
            .collect();
        let plane: Vec<f32> = (0..w * h).map(|i| (i % w) as f32 * 2.0).collect();
        let snake: Vec<f32> = (0..w * h)
            .map(|i| {
                let (x, y) = (i % w, i / w);
                let along = if y % 2 == 0 { x } else { w - 1 - x };
                (y * w + along) as f32 * 10.0
            })
            .collect();
        for (name, z) in [("rough", rough), ("plane", plane), ("snake", snake)] {
            let counts = twin(&z, [w, h], 2.0);
            let want = crate::geology::cpu::d8_area(&z, &push([w, h], 2.0));
            assert_eq!(areas(&counts, 4.0), want, "{name}");
        }
    }
}

//! The stream-power kernels on the GPU over one region: heights, drainage area and the uplift
//! map live in storage buffers of the region (row-major), so a region spans page borders without
//! seams. Heights and areas ping-pong; the receivers are rewritten every iteration, a byte each
//! where the device stores bytes in buffers (`*_bytes.comp`), else an int each. An uplift map
//! that is 1 everywhere is not read (`GeologyPush::uniform_uplift`).

use super::cpu::State;
use super::shared::GeologyPush;
use crate::gpu::{
    shaders, Access, BindingKind, Buffer, BufferDesc, ComputeKernel, DescriptorSet, Gpu, GpuError,
    GpuTimer, Recorder, Resource, Result,
};
use crate::shared_constants::{GEOLOGY_GROUP_X, GEOLOGY_GROUP_Y};
use std::sync::Arc;

/// Iterations recorded per submission (each submission is waited for); the last one of each
/// also measures how far the region is from steady state.
pub const ITERATIONS_PER_SUBMIT: usize = 64;

/// The two stream-power pipelines.
pub struct Kernels {
    receivers: ComputeKernel<GeologyPush>,
    update: ComputeKernel<GeologyPush>,
    /// Bytes of one receiver: 1 where the device has `storageBuffer8BitAccess`, else 4.
    receiver_bytes: u64,
}

impl Kernels {
    /// The kernels with receivers a byte each where `gpu` stores bytes in buffers.
    pub fn new(gpu: &Arc<Gpu>) -> Result<Self> {
        Self::with_byte_receivers(gpu, gpu.storage_buffer_8bit())
    }

    /// The kernels with receivers a byte each (`bytes`, which `gpu` must support) or an int
    /// each (any device; tests run both).
    pub fn with_byte_receivers(gpu: &Arc<Gpu>, bytes: bool) -> Result<Self> {
        if bytes && !gpu.storage_buffer_8bit() {
            return Err(GpuError::Unsupported(format!(
                "{} does not store bytes in buffers (storageBuffer8BitAccess)",
                gpu.info().name
            )));
        }
        let k = |shader, n: usize| {
            ComputeKernel::new(gpu, shader, &vec![BindingKind::StorageBuffer; n], &[])
        };
        let (receivers, update, receiver_bytes) = if bytes {
            let r = &shaders::GEOLOGY_RECEIVERS_BYTES_COMP;
            (r, &shaders::GEOLOGY_UPDATE_BYTES_COMP, 1)
        } else {
            let r = &shaders::GEOLOGY_RECEIVERS_COMP;
            (r, &shaders::GEOLOGY_UPDATE_COMP, 4)
        };
        Ok(Self {
            receivers: k(receivers, 3)?,
            update: k(update, 8)?,
            receiver_bytes,
        })
    }
}

/// A region's stream-power state on the GPU.
pub struct GpuGeology {
    gpu: Arc<Gpu>,
    size: [u32; 2],
    z: [Buffer; 2],
    a: [Buffer; 2],
    u: Buffer,
    r: Buffer,
    /// 1 / the sum of the flow weights of each texel: a texel each with multi-flow routing, one
    /// word (never written) with D8.
    w: Buffer,
    /// Made for multi-flow routing (`GeologyPush::multi_flow`).
    multi_flow: bool,
    stats: Buffer,
    readback: Buffer,
    kernels: Arc<Kernels>,
    /// Per parity of `z`/`a`: the receivers' and the update's descriptor sets.
    receivers: [DescriptorSet; 2],
    update: [DescriptorSet; 2],
    /// Which of `z` and `a` hold the current state.
    current: usize,
    /// The uplift map is 1 everywhere: the update skips reading it.
    uniform_uplift: bool,
    /// GPU time of the timed submissions so far, ms.
    gpu_ms: f64,
}

fn storage(gpu: &Arc<Gpu>, name: &str, bytes: u64) -> Result<Buffer> {
    Buffer::new(gpu, name, BufferDesc::storage_copyable(bytes))
}

impl GpuGeology {
    /// Texels the largest region may have on `gpu` (each buffer is one binding).
    pub fn max_texels(gpu: &Gpu) -> u64 {
        u64::from(gpu.info().max_storage_buffer_range) / 4
    }

    /// The region of `state` on the GPU, with pipelines made before, for `multi_flow` routing
    /// or D8 (the weights' buffer is only allocated for the first).
    pub fn new(
        gpu: &Arc<Gpu>,
        kernels: &Arc<Kernels>,
        state: &State,
        multi_flow: bool,
    ) -> Result<Self> {
        let size = [state.width as u32, state.height as u32];
        let n = (state.width * state.height).max(1) as u64;
        if n > Self::max_texels(gpu) {
            return Err(GpuError::Unsupported(format!(
                "a {n}-texel geology region is past what {} binds at once ({} texels)",
                gpu.info().name,
                Self::max_texels(gpu)
            )));
        }
        let bytes = n * 4;
        let z = [
            storage(gpu, "geology z0", bytes)?,
            storage(gpu, "geology z1", bytes)?,
        ];
        let a = [
            storage(gpu, "geology a0", bytes)?,
            storage(gpu, "geology a1", bytes)?,
        ];
        let u = storage(gpu, "geology uplift", bytes)?;
        // Rounded up to whole words: a storage buffer's range is a multiple of 4 on some devices.
        let r_bytes = (n * kernels.receiver_bytes).next_multiple_of(4);
        let r = storage(gpu, "geology receivers", r_bytes)?;
        let w = storage(
            gpu,
            "geology flow weights",
            if multi_flow { bytes } else { 4 },
        )?;
        let stats = storage(gpu, "geology steady measure", 4)?;
        let sb = Resource::StorageBuffer;
        let receivers = [
            kernels.receivers.bind(&[sb(&z[0]), sb(&r), sb(&w)])?,
            kernels.receivers.bind(&[sb(&z[1]), sb(&r), sb(&w)])?,
        ];
        let update = |c: usize| {
            kernels.update.bind(&[
                sb(&z[c]),
                sb(&a[c]),
                sb(&u),
                sb(&r),
                sb(&z[1 - c]),
                sb(&a[1 - c]),
                sb(&stats),
                sb(&w),
            ])
        };
        let update = [update(0)?, update(1)?];
        let readback = Buffer::new(gpu, "geology readback", BufferDesc::readback(bytes))?;
        let g = Self {
            gpu: gpu.clone(),
            size,
            z,
            a,
            u,
            r,
            w,
            multi_flow,
            stats,
            readback,
            kernels: kernels.clone(),
            receivers,
            update,
            current: 0,
            uniform_uplift: state.u.iter().all(|&u| u == 1.0),
            gpu_ms: 0.0,
        };
        let mut upload = Buffer::new(gpu, "geology upload", BufferDesc::upload(bytes))?;
        for (data, dst) in [(&state.z, &g.z[0]), (&state.a, &g.a[0]), (&state.u, &g.u)] {
            upload.write(data.as_slice())?;
            let mut rec = Recorder::new(gpu)?;
            rec.buffer(&upload, Access::HostWrite);
            rec.copy_buffer(&upload, 0, dst, 0, bytes);
            rec.submit_and_wait()?;
        }
        Ok(g)
    }

    pub fn size(&self) -> [u32; 2] {
        self.size
    }

    /// Bytes a D8 iteration reads and writes per texel if neighbour reads hit the caches (the
    /// bench's cost model): `receivers` reads z and writes the receiver (4 + r); `update` reads
    /// z, A, the receiver and, unless it is 1 everywhere, u, and writes z' and A' (16 + r, + 4),
    /// with r the receiver's bytes (1, or 4 without byte storage).
    pub fn bytes_per_texel(&self) -> u64 {
        let r = self.kernels.receiver_bytes;
        let u = if self.uniform_uplift { 0 } else { 4 };
        (4 + r) + (16 + r + u)
    }

    /// GPU time of the submissions timed so far (a timer given to [`Self::run`]), ms.
    pub fn gpu_ms(&self) -> f64 {
        self.gpu_ms
    }

    /// Runs up to `iterations` iterations, [`ITERATIONS_PER_SUBMIT`] per submission, the first
    /// `stationary` of them solving for the steady state (`GeologyPush::stationary`), calling
    /// `progress(iterations done, steady-state measure)` after each submission; stops early
    /// once the measure is at most `until` (when given). With `timer`, each submission is timed
    /// as one pass "geology". Returns the iterations run and the last measure.
    pub fn run(
        &mut self,
        push: &GeologyPush,
        iterations: usize,
        stationary: usize,
        until: Option<f32>,
        timer: Option<&GpuTimer>,
        mut progress: impl FnMut(usize, f32),
    ) -> Result<(usize, f32)> {
        let mut done = 0;
        let mut measure = f32::INFINITY;
        while done < iterations {
            let n = ITERATIONS_PER_SUBMIT.min(iterations - done);
            measure = self.submit(push, n, stationary.saturating_sub(done), timer)?;
            done += n;
            progress(done, measure);
            if until.is_some_and(|t| measure <= t) {
                break;
            }
        }
        Ok((done, measure))
    }

    /// Records and waits for `n` iterations in one submission, the first `stationary` of them
    /// solving for the steady state; returns the last one's measure.
    fn submit(
        &mut self,
        push: &GeologyPush,
        n: usize,
        stationary: usize,
        timer: Option<&GpuTimer>,
    ) -> Result<f32> {
        if push.multi_flow == 1 && !self.multi_flow {
            return Err(GpuError::usage(
                "a multi-flow iteration on a geology region made for D8",
            ));
        }
        let gpu = self.gpu.clone();
        let mut rec = Recorder::new(&gpu)?;
        let query = match timer {
            Some(t) => {
                rec.reset_timer(t);
                Some((t, rec.timer_begin(t, "geology")?))
            }
            None => None,
        };
        let groups = [
            self.size[0].div_ceil(GEOLOGY_GROUP_X as u32),
            self.size[1].div_ceil(GEOLOGY_GROUP_Y as u32),
            1,
        ];
        let mut c = self.current;
        let k = &*self.kernels;
        for i in 0..n {
            let last = i + 1 == n;
            let push = GeologyPush {
                measure: i32::from(last),
                uniform_uplift: i32::from(self.uniform_uplift),
                stationary: i32::from(i < stationary),
                ..*push
            };
            if last {
                rec.fill_buffer(&self.stats, 0, 4, 0);
            }
            rec.pass(&k.receivers, &self.receivers[c])
                .read_buffer(&self.z[c])
                .write_buffer(&self.r)
                .write_buffer(&self.w)
                .push(&push)
                .dispatch(groups)?;
            rec.pass(&k.update, &self.update[c])
                .read_buffer(&self.z[c])
                .read_buffer(&self.a[c])
                .read_buffer(&self.u)
                .read_buffer(&self.r)
                .write_buffer(&self.z[1 - c])
                .write_buffer(&self.a[1 - c])
                .read_write_buffer(&self.stats)
                .read_buffer(&self.w)
                .push(&push)
                .dispatch(groups)?;
            c = 1 - c;
        }
        if let Some((t, q)) = query {
            rec.timer_end(t, q);
        }
        rec.copy_buffer(&self.stats, 0, &self.readback, 0, 4);
        rec.buffer(&self.readback, Access::HostRead);
        rec.submit_and_wait()?;
        self.current = c;
        if let Some(t) = timer {
            self.gpu_ms += t.results()?.iter().map(|p| p.gpu_ns).sum::<f64>() * 1e-6;
        }
        let bits = bytemuck::cast_slice::<u8, u32>(self.readback.mapped(4)?)[0];
        Ok(f32::from_bits(bits))
    }

    fn read(&self, buf: &Buffer) -> Result<Vec<f32>> {
        let bytes = u64::from(self.size[0]) * u64::from(self.size[1]) * 4;
        let mut rec = Recorder::new(&self.gpu)?;
        rec.copy_buffer(buf, 0, &self.readback, 0, bytes);
        rec.buffer(&self.readback, Access::HostRead);
        rec.submit_and_wait()?;
        Ok(bytemuck::cast_slice::<u8, f32>(self.readback.mapped(bytes as usize)?).to_vec())
    }

    /// The heights as they are now, read back (z only).
    pub fn z(&self) -> Result<Vec<f32>> {
        self.read(&self.z[self.current])
    }

    /// The state as it is now, read back.
    pub fn state(&self) -> Result<State> {
        Ok(State {
            width: self.size[0] as usize,
            height: self.size[1] as usize,
            z: self.read(&self.z[self.current])?,
            a: self.read(&self.a[self.current])?,
            u: self.read(&self.u)?,
        })
    }
}

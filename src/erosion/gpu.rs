//! The erosion kernels on the GPU over one region: the state lives in storage buffers of the
//! region (row-major), so a region spans page borders without seams; heights come from and go
//! back to the caller (the CLI's file, a document's field). Terrain and water ping-pong; flux,
//! sediment and the thermal shares are updated in place or through a second buffer.

use super::cpu::State;
use super::params::Model;
use super::shared::ErosionPush;
use crate::gpu::{
    shaders, Access, BindingKind, Buffer, BufferDesc, ComputeKernel, DescriptorSet, Gpu, GpuError,
    GpuTimer, Recorder, Resource, Result,
};
use std::sync::Arc;

/// Steps recorded per submission (each submission is waited for).
pub const STEPS_PER_SUBMIT: usize = 32;

/// The erosion pipelines: made once (per document, per run) and shared by every region.
pub struct Kernels {
    flux: ComputeKernel<ErosionPush>,
    water: ComputeKernel<ErosionPush>,
    transport: ComputeKernel<ErosionPush>,
    thermal_out: ComputeKernel<ErosionPush>,
    thermal_in: ComputeKernel<ErosionPush>,
    heights_in: ComputeKernel<ErosionPush>,
    blend_out: ComputeKernel<ErosionPush>,
}

impl Kernels {
    pub fn new(gpu: &Arc<Gpu>) -> Result<Self> {
        let k = |shader, n: usize| {
            ComputeKernel::new(gpu, shader, &vec![BindingKind::StorageBuffer; n], &[])
        };
        Ok(Self {
            flux: k(&shaders::EROSION_FLUX_COMP, 3)?,
            water: k(&shaders::EROSION_WATER_COMP, 7)?,
            transport: k(&shaders::EROSION_TRANSPORT_COMP, 5)?,
            thermal_out: k(&shaders::EROSION_THERMAL_OUT_COMP, 2)?,
            thermal_in: k(&shaders::EROSION_THERMAL_IN_COMP, 3)?,
            heights_in: k(&shaders::EROSION_HEIGHTS_IN_COMP, 2)?,
            blend_out: k(&shaders::EROSION_BLEND_OUT_COMP, 5)?,
        })
    }
}

/// Descriptor sets for every parity of terrain (`cb`) and water (`cd`) buffers.
struct Sets {
    flux: [[DescriptorSet; 2]; 2],
    water: [[DescriptorSet; 2]; 2],
    transport: [DescriptorSet; 2],
    thermal_out: [DescriptorSet; 2],
    thermal_in: [DescriptorSet; 2],
    heights_in: DescriptorSet,
    blend_out: [DescriptorSet; 2],
}

/// A region's erosion state on the GPU and the kernels that step it.
pub struct GpuErosion {
    gpu: Arc<Gpu>,
    size: [u32; 2],
    b: [Buffer; 2],
    d: [Buffer; 2],
    f: Buffer,
    s: Buffer,
    s1: Buffer,
    ratio: Buffer,
    /// A brush instance's heights on the GPU: the square in, the blended result out.
    h: Buffer,
    /// A brush instance's wear and deposits (metres): the square's in, with the blend's added.
    wear: [Buffer; 2],
    kernels: Arc<Kernels>,
    sets: Sets,
    /// Texels the buffers hold, and the staging buffers for loads and reads.
    capacity: u64,
    upload: Buffer,
    readback: Buffer,
    /// Which of `b` and `d` hold the current terrain and water.
    cb: usize,
    cd: usize,
}

fn storage(gpu: &Arc<Gpu>, name: &str, bytes: u64) -> Result<Buffer> {
    Buffer::new(gpu, name, BufferDesc::storage_copyable(bytes))
}

impl GpuErosion {
    /// Texels the largest region may have on `gpu` (its flux buffer is one binding).
    pub fn max_texels(gpu: &Gpu) -> u64 {
        u64::from(gpu.info().max_storage_buffer_range) / 16
    }

    /// A region of `size` texels holding terrain `b` (row-major), no water, sediment or flux.
    pub fn new(gpu: &Arc<Gpu>, size: [u32; 2], b: &[f32]) -> Result<Self> {
        Self::with_kernels(gpu, &Arc::new(Kernels::new(gpu)?), size, b)
    }

    /// [`Self::new`] with pipelines made before.
    pub fn with_kernels(
        gpu: &Arc<Gpu>,
        kernels: &Arc<Kernels>,
        size: [u32; 2],
        b: &[f32],
    ) -> Result<Self> {
        let mut g = Self::with_capacity(gpu, kernels, u64::from(size[0]) * u64::from(size[1]))?;
        g.load(size, b)?;
        Ok(g)
    }

    /// Buffers for regions of up to `capacity` texels (load one with [`Self::load`]): a brush
    /// reuses them from instance to instance instead of allocating (and the driver clearing)
    /// new memory each time.
    pub fn with_capacity(gpu: &Arc<Gpu>, kernels: &Arc<Kernels>, capacity: u64) -> Result<Self> {
        let n = capacity.max(1);
        if n > Self::max_texels(gpu) {
            return Err(GpuError::Unsupported(format!(
                "a {n}-texel erosion region is past what {} binds at once ({} texels)",
                gpu.info().name,
                Self::max_texels(gpu)
            )));
        }
        let bytes = n * 4;
        let b_bufs = [
            storage(gpu, "erosion b0", bytes)?,
            storage(gpu, "erosion b1", bytes)?,
        ];
        let d_bufs = [
            storage(gpu, "erosion d0", bytes)?,
            storage(gpu, "erosion d1", bytes)?,
        ];
        let f = storage(gpu, "erosion flux", bytes * 4)?;
        let s = storage(gpu, "erosion sediment", bytes)?;
        let s1 = storage(gpu, "erosion sediment s1", bytes)?;
        let ratio = storage(gpu, "erosion thermal shares", bytes)?;
        let h = storage(gpu, "erosion brush heights", bytes)?;
        let wear = [
            storage(gpu, "erosion brush wear", bytes)?,
            storage(gpu, "erosion brush deposits", bytes)?,
        ];
        let kernels = kernels.clone();
        let sb = Resource::StorageBuffer;
        let both = |f: &dyn Fn(usize) -> Result<DescriptorSet>| -> Result<[DescriptorSet; 2]> {
            Ok([f(0)?, f(1)?])
        };
        // Terrain parity cb and water parity cd: what each hydraulic pass reads and writes.
        let flux = |cb: usize, cd: usize| {
            kernels
                .flux
                .bind(&[sb(&b_bufs[cb]), sb(&d_bufs[cd]), sb(&f)])
        };
        let water = |cb: usize, cd: usize| {
            kernels.water.bind(&[
                sb(&b_bufs[cb]),
                sb(&b_bufs[1 - cb]),
                sb(&d_bufs[cd]),
                sb(&d_bufs[1 - cd]),
                sb(&f),
                sb(&s),
                sb(&s1),
            ])
        };
        let sets = Sets {
            flux: [both(&|cd| flux(0, cd))?, both(&|cd| flux(1, cd))?],
            water: [both(&|cd| water(0, cd))?, both(&|cd| water(1, cd))?],
            transport: both(&|cd| {
                kernels.transport.bind(&[
                    sb(&d_bufs[cd]),
                    sb(&d_bufs[1 - cd]),
                    sb(&f),
                    sb(&s1),
                    sb(&s),
                ])
            })?,
            thermal_out: both(&|cb| kernels.thermal_out.bind(&[sb(&b_bufs[cb]), sb(&ratio)]))?,
            thermal_in: both(&|cb| {
                kernels
                    .thermal_in
                    .bind(&[sb(&b_bufs[cb]), sb(&ratio), sb(&b_bufs[1 - cb])])
            })?,
            heights_in: kernels.heights_in.bind(&[sb(&h), sb(&b_bufs[0])])?,
            blend_out: both(&|cb| {
                kernels.blend_out.bind(&[
                    sb(&b_bufs[cb]),
                    sb(&s),
                    sb(&h),
                    sb(&wear[0]),
                    sb(&wear[1]),
                ])
            })?,
        };
        let upload = Buffer::new(gpu, "erosion upload", BufferDesc::upload(bytes))?;
        let readback = Buffer::new(gpu, "erosion readback", BufferDesc::readback(bytes * 4))?;
        Ok(Self {
            gpu: gpu.clone(),
            size: [0, 0],
            capacity: n,
            upload,
            readback,
            b: b_bufs,
            d: d_bufs,
            f,
            s,
            s1,
            ratio,
            h,
            wear,
            kernels,
            sets,
            cb: 0,
            cd: 0,
        })
    }

    pub fn size(&self) -> [u32; 2] {
        self.size
    }

    /// Texels the buffers hold.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Starts a region of `size` texels (at most the capacity) holding terrain `b` (row-major),
    /// without water, sediment or flux.
    pub fn load(&mut self, size: [u32; 2], b: &[f32]) -> Result<()> {
        let n = u64::from(size[0]) * u64::from(size[1]);
        assert_eq!(b.len() as u64, n, "a whole region");
        if n > self.capacity {
            return Err(GpuError::usage(
                "an erosion region past the buffers' capacity",
            ));
        }
        let bytes = n * 4;
        self.upload.write(b)?;
        let mut rec = Recorder::new(&self.gpu)?;
        rec.buffer(&self.upload, Access::HostWrite);
        rec.copy_buffer(&self.upload, 0, &self.b[0], 0, bytes);
        for (z, len) in [(&self.d[0], bytes), (&self.s, bytes), (&self.f, bytes * 4)] {
            rec.fill_buffer(z, 0, len, 0);
        }
        rec.submit_and_wait()?;
        self.size = size;
        self.cb = 0;
        self.cd = 0;
        Ok(())
    }

    /// The square's heights of a brush instance on the GPU ([`Self::record_instance`]): f32,
    /// row-major over the square.
    pub fn heights(&self) -> &Buffer {
        &self.h
    }

    /// The square's wear and deposits of a brush instance on the GPU ([`Self::record_instance`]):
    /// f32 metres, row-major over the square.
    pub fn wear(&self) -> [&Buffer; 2] {
        [&self.wear[0], &self.wear[1]]
    }

    /// Records a whole brush instance over a square of `push.size` texels (at most the
    /// capacity) whose heights, wear and deposits the caller has recorded copies of into
    /// [`Self::heights`] and [`Self::wear`]:
    /// `b = h·height_scale` without water, sediment or flux, `steps` steps of `model` (rain and
    /// shedding weighted by the push's falloff), the sediment settling and the blend
    /// `h ← h + strength·((b + s)/height_scale − h)` back into [`Self::heights`] — the
    /// arithmetic of [`super::brush::erode_square`] — with the change in metres added to the
    /// wear and deposits ([`crate::wear::change`]). The state is not kept for reading: the next
    /// [`Self::load`] starts afresh.
    pub fn record_instance<'a>(
        &'a self,
        rec: &mut Recorder<'a>,
        push: &ErosionPush,
        model: Model,
        steps: usize,
    ) -> Result<()> {
        let n = push.size[0] as u64 * push.size[1] as u64;
        assert!(n <= self.capacity, "a square within the buffers' capacity");
        let g = groups(push.size);
        let k = &self.kernels;
        rec.pass(&k.heights_in, &self.sets.heights_in)
            .read_buffer(&self.h)
            .write_buffer(&self.b[0])
            .push(push)
            .dispatch(g)?;
        for (z, len) in [(&self.d[0], n * 4), (&self.s, n * 4), (&self.f, n * 16)] {
            rec.fill_buffer(z, 0, len, 0);
        }
        let mut parity = (0, 0);
        for _ in 0..steps {
            parity = self.record_at(rec, push, model, parity)?;
        }
        rec.pass(&k.blend_out, &self.sets.blend_out[parity.0])
            .read_buffer(&self.b[parity.0])
            .read_buffer(&self.s)
            .read_write_buffer(&self.h)
            .read_write_buffer(&self.wear[0])
            .read_write_buffer(&self.wear[1])
            .push(push)
            .dispatch(g)
    }

    /// Runs `steps` steps, `STEPS_PER_SUBMIT` per submission, calling `progress(steps done)`
    /// after each; with `timer`, each submission's steps are timed as one pass "erosion".
    pub fn run(
        &mut self,
        push: &ErosionPush,
        model: Model,
        steps: usize,
        timer: Option<&GpuTimer>,
        mut progress: impl FnMut(usize),
    ) -> Result<Vec<f64>> {
        let mut done = 0;
        let mut times = Vec::new();
        while done < steps {
            let n = STEPS_PER_SUBMIT.min(steps - done);
            self.submit_steps(push, model, n, timer)?;
            if let Some(t) = timer {
                times.extend(t.results()?.iter().map(|p| p.gpu_ns));
            }
            done += n;
            progress(done);
        }
        Ok(times)
    }

    /// Records and waits for `n` steps in one submission.
    pub fn submit_steps(
        &mut self,
        push: &ErosionPush,
        model: Model,
        n: usize,
        timer: Option<&GpuTimer>,
    ) -> Result<()> {
        // The recorder borrows the buffers while `record_step` flips parities: record with
        // parities tracked here, then store them.
        let gpu = self.gpu.clone();
        let mut parity = (self.cb, self.cd);
        let mut rec = Recorder::new(&gpu)?;
        let query = match timer {
            Some(t) => {
                rec.reset_timer(t);
                Some((t, rec.timer_begin(t, "erosion")?))
            }
            None => None,
        };
        let this = &*self;
        for _ in 0..n {
            parity = this.record_at(&mut rec, push, model, parity)?;
        }
        if let Some((t, q)) = query {
            rec.timer_end(t, q);
        }
        rec.submit_and_wait()?;
        self.cb = parity.0;
        self.cd = parity.1;
        Ok(())
    }

    /// Records one step reading terrain and water parities `(cb, cd)`; returns the new ones.
    fn record_at<'a>(
        &'a self,
        rec: &mut Recorder<'a>,
        push: &ErosionPush,
        model: Model,
        (mut cb, mut cd): (usize, usize),
    ) -> Result<(usize, usize)> {
        let g = groups(push.size);
        let k = &self.kernels;
        if model.hydraulic() {
            rec.pass(&k.flux, &self.sets.flux[cb][cd])
                .read_buffer(&self.b[cb])
                .read_buffer(&self.d[cd])
                .read_write_buffer(&self.f)
                .push(push)
                .dispatch(g)?;
            rec.pass(&k.water, &self.sets.water[cb][cd])
                .read_buffer(&self.b[cb])
                .write_buffer(&self.b[1 - cb])
                .read_buffer(&self.d[cd])
                .write_buffer(&self.d[1 - cd])
                .read_buffer(&self.f)
                .read_buffer(&self.s)
                .write_buffer(&self.s1)
                .push(push)
                .dispatch(g)?;
            rec.pass(&k.transport, &self.sets.transport[cd])
                .read_buffer(&self.d[cd])
                .read_write_buffer(&self.d[1 - cd])
                .read_buffer(&self.f)
                .read_buffer(&self.s1)
                .write_buffer(&self.s)
                .push(push)
                .dispatch(g)?;
            cb = 1 - cb;
            cd = 1 - cd;
        }
        if model.thermal() {
            rec.pass(&k.thermal_out, &self.sets.thermal_out[cb])
                .read_buffer(&self.b[cb])
                .write_buffer(&self.ratio)
                .push(push)
                .dispatch(g)?;
            rec.pass(&k.thermal_in, &self.sets.thermal_in[cb])
                .read_buffer(&self.b[cb])
                .read_buffer(&self.ratio)
                .write_buffer(&self.b[1 - cb])
                .push(push)
                .dispatch(g)?;
            cb = 1 - cb;
        }
        Ok((cb, cd))
    }

    /// `floats_per_texel` floats per texel of the region from `buf`, read back.
    fn read(&self, buf: &Buffer, floats_per_texel: u64) -> Result<Vec<f32>> {
        let texels = u64::from(self.size[0]) * u64::from(self.size[1]);
        let bytes = texels * floats_per_texel * 4;
        let mut rec = Recorder::new(&self.gpu)?;
        rec.buffer(buf, Access::TransferRead);
        rec.copy_buffer(buf, 0, &self.readback, 0, bytes);
        rec.buffer(&self.readback, Access::HostRead);
        rec.submit_and_wait()?;
        let mapped = self.readback.mapped(bytes as usize)?;
        Ok(bytemuck::cast_slice::<u8, f32>(mapped).to_vec())
    }

    /// The terrain with the suspended sediment settled (`b + s`), read back: the end of a run
    /// when water and sediment are not wanted.
    pub fn settled(&self) -> Result<Vec<f32>> {
        let mut b = self.read(&self.b[self.cb], 1)?;
        let s = self.read(&self.s, 1)?;
        for (b, s) in b.iter_mut().zip(&s) {
            *b += *s;
        }
        Ok(b)
    }

    /// Terrain and water depth as they are now, read back (a live view of a run).
    pub fn terrain_and_water(&self) -> Result<(Vec<f32>, Vec<f32>)> {
        Ok((
            self.read(&self.b[self.cb], 1)?,
            self.read(&self.d[self.cd], 1)?,
        ))
    }

    /// The state as it is now (terrain, water, sediment, flux), read back.
    pub fn state(&self) -> Result<State> {
        let b = self.read(&self.b[self.cb], 1)?;
        let mut st = State::new(self.size[0] as usize, self.size[1] as usize, b);
        st.d = self.read(&self.d[self.cd], 1)?;
        st.s = self.read(&self.s, 1)?;
        st.f = self
            .read(&self.f, 4)?
            .chunks_exact(4)
            .map(|c| [c[0], c[1], c[2], c[3]])
            .collect();
        Ok(st)
    }
}

/// Workgroups covering a region of `size` texels.
fn groups(size: [i32; 2]) -> [u32; 3] {
    [
        (size[0] as u32).div_ceil(16),
        (size[1] as u32).div_ceil(16),
        1,
    ]
}

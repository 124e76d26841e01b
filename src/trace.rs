//! Timeline traces for Perfetto and chrome://tracing (Chrome trace-event JSON, docs/bench.md
//! "Traces"). While a trace records ([`start`] .. [`stop`]), every CPU phase that
//! [`crate::profile`] measures becomes an event on its thread's track, and every timed GPU pass
//! ([`crate::gpu::GpuTimer`]) an event on the GPU queue's track, its timestamps moved onto the
//! CPU clock by an offset measured when the trace starts ([`GpuClock`]). Frames and journal steps
//! are CPU events of their own ("frame", "step").

use std::cell::Cell;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Track of the GPU queue (CPU threads are numbered from 1).
pub const GPU_TRACK: u32 = 1000;

static RECORDING: AtomicBool = AtomicBool::new(false);
static NEXT_THREAD: AtomicU32 = AtomicU32::new(1);
static TRACE: Mutex<Option<Recording>> = Mutex::new(None);

thread_local! {
    static THREAD: Cell<u32> = const { Cell::new(0) };
}

/// How GPU timestamps map onto the trace's CPU clock: `cpu_us = offset_us + ticks * period`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuClock {
    /// How the offset was found.
    pub method: &'static str,
    /// CPU time (µs since the trace's start) of GPU tick 0.
    pub offset_us: f64,
    /// Nanoseconds per tick.
    pub period_ns: f64,
    /// Half the round trip of the measurement: how far a GPU event may sit from the truth, µs.
    pub uncertainty_us: f64,
}

/// One event: a span on a track, with optional arguments (a JSON object's text).
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub name: String,
    pub track: u32,
    pub ts_us: f64,
    pub dur_us: f64,
    pub args: Option<String>,
}

struct Recording {
    epoch: Instant,
    gpu: Option<GpuClock>,
    events: Vec<Event>,
    threads: Vec<(u32, String)>,
}

/// Whether a trace is recording.
pub fn recording() -> bool {
    RECORDING.load(Ordering::Relaxed)
}

fn lock() -> std::sync::MutexGuard<'static, Option<Recording>> {
    TRACE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Starts recording (dropping a trace that was recording); returns the instant CPU times count
/// from.
pub fn start() -> Instant {
    let epoch = Instant::now();
    *lock() = Some(Recording {
        epoch,
        gpu: None,
        events: Vec::new(),
        threads: Vec::new(),
    });
    RECORDING.store(true, Ordering::Relaxed);
    epoch
}

/// Sets how the recording trace places GPU timestamps (see [`crate::gpu::GpuTimer::calibrate`]).
pub fn set_gpu_clock(clock: GpuClock) {
    if let Some(r) = lock().as_mut() {
        r.gpu = Some(clock);
    }
}

/// Stops recording and returns the trace (None when none was recording).
pub fn stop() -> Option<Trace> {
    RECORDING.store(false, Ordering::Relaxed);
    lock().take().map(|r| Trace {
        gpu: r.gpu,
        events: r.events,
        threads: r.threads,
    })
}

/// Stops recording and writes the trace to `path` (atomically); returns its event count.
pub fn stop_into(path: &std::path::Path) -> Result<usize, String> {
    let trace = stop().ok_or("no trace was recording")?;
    crate::atomic_file::write_bytes_atomic(path, trace.to_json().as_bytes())?;
    Ok(trace.events.len())
}

/// This thread's track, named on first use.
fn thread_track(r: &mut Recording) -> u32 {
    THREAD.with(|t| {
        if t.get() == 0 {
            t.set(NEXT_THREAD.fetch_add(1, Ordering::Relaxed));
        }
        let id = t.get();
        if !r.threads.iter().any(|(i, _)| *i == id) {
            let name = std::thread::current()
                .name()
                .map_or_else(|| format!("CPU thread {id}"), |n| format!("CPU {n}"));
            r.threads.push((id, name));
        }
        id
    })
}

/// Records a CPU span of this thread from `start` to now (no-op when not recording).
pub fn cpu_span(name: &str, start: Instant) {
    if !recording() {
        return;
    }
    let end = Instant::now();
    if let Some(r) = lock().as_mut() {
        let track = thread_track(r);
        let ts = start.saturating_duration_since(r.epoch).as_secs_f64() * 1e6;
        let dur = end.saturating_duration_since(start).as_secs_f64() * 1e6;
        r.events.push(Event {
            name: name.to_string(),
            track,
            ts_us: ts,
            dur_us: dur,
            args: None,
        });
    }
}

/// Records a GPU pass timed from tick `begin` to tick `end` (no-op when not recording, or
/// before the GPU clock is known).
pub fn gpu_span(name: &str, begin: u64, end: u64, args: Option<String>) {
    if !recording() {
        return;
    }
    if let Some(r) = lock().as_mut() {
        let Some(c) = r.gpu else {
            return;
        };
        let ts = c.offset_us + begin as f64 * c.period_ns * 1e-3;
        let dur = end.saturating_sub(begin) as f64 * c.period_ns * 1e-3;
        r.events.push(Event {
            name: name.to_string(),
            track: GPU_TRACK,
            ts_us: ts,
            dur_us: dur,
            args,
        });
    }
}

/// A finished trace.
#[derive(Clone, Debug)]
pub struct Trace {
    pub gpu: Option<GpuClock>,
    pub events: Vec<Event>,
    threads: Vec<(u32, String)>,
}

impl Trace {
    /// The trace as Chrome trace-event JSON: thread-name metadata, then complete ("X") events
    /// sorted by time; `otherData` holds the GPU clock.
    pub fn to_json(&self) -> String {
        let mut s = String::from("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
        let mut first = true;
        let mut push = |s: &mut String, line: String| {
            if !std::mem::take(&mut first) {
                s.push_str(",\n");
            }
            s.push_str(&line);
        };
        let meta = |tid: u32, name: &str| {
            format!(
                "{{\"ph\":\"M\",\"pid\":1,\"tid\":{tid},\"name\":\"thread_name\",\"args\":{{\"name\":{}}}}}",
                json_string(name)
            )
        };
        push(&mut s, meta(GPU_TRACK, "GPU queue"));
        for (id, name) in &self.threads {
            push(&mut s, meta(*id, name));
        }
        let mut events: Vec<&Event> = self.events.iter().collect();
        events.sort_by(|a, b| a.ts_us.total_cmp(&b.ts_us));
        for e in events {
            let mut line = format!(
                "{{\"ph\":\"X\",\"pid\":1,\"tid\":{},\"name\":{},\"cat\":\"{}\",\"ts\":{:.3},\"dur\":{:.3}",
                e.track,
                json_string(&e.name),
                if e.track == GPU_TRACK { "gpu" } else { "cpu" },
                e.ts_us,
                e.dur_us
            );
            if let Some(a) = &e.args {
                let _ = write!(line, ",\"args\":{a}");
            }
            line.push('}');
            push(&mut s, line);
        }
        s.push_str("\n],\"otherData\":{");
        match self.gpu {
            Some(c) => {
                let _ = write!(
                    s,
                    "\"gpu_clock\":{},\"gpu_offset_us\":{:.3},\"gpu_period_ns\":{},\"gpu_uncertainty_us\":{:.3}",
                    json_string(c.method), c.offset_us, c.period_ns, c.uncertainty_us
                );
            }
            None => s.push_str("\"gpu_clock\":\"none (no timestamps)\""),
        }
        s.push_str("}}\n");
        s
    }
}

/// `v` as a JSON string literal.
fn json_string(v: &str) -> String {
    let mut s = String::with_capacity(v.len() + 2);
    s.push('"');
    for c in v.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(s, "\\u{:04x}", c as u32);
            }
            c => s.push(c),
        }
    }
    s.push('"');
    s
}

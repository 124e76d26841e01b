//! Drives an editor under Xvfb as a person would, but waits for what the editor shows instead
//! of for time: the editor writes its interface state a line a frame (`--ui-state`), and each
//! move, press and key here waits for the frames that saw it. On a loaded machine a frame can
//! take seconds; a click sent on a timer then lands before the panel it aims at is drawn.

use super::{xdotool, Xvfb};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

/// How long one wait may take: a frame of the loaded suite takes seconds, a step's run more.
const PATIENCE: Duration = Duration::from_secs(300);

pub struct Driver<'a> {
    x: &'a Xvfb,
    window: String,
    pub child: Child,
    state: PathBuf,
    /// Bytes of the state file read so far (whole lines).
    offset: u64,
    /// Lines read and not yet looked at by a wait, oldest first.
    pending: std::collections::VecDeque<Value>,
    /// The newest line looked at.
    last: Option<Value>,
}

impl<'a> Driver<'a> {
    /// Drives `child`, whose window is `window` and whose `--ui-state` file is `state`.
    pub fn new(x: &'a Xvfb, child: Child, window: String, state: &Path) -> Self {
        let mut d = Self {
            x,
            window,
            child,
            state: state.to_path_buf(),
            offset: 0,
            pending: Default::default(),
            last: None,
        };
        d.wait("the first frame", |_| true);
        d
    }

    /// Reads the whole lines the editor wrote since the last read into `pending`.
    fn read_new(&mut self) {
        use std::io::{Read, Seek};
        let Ok(mut f) = std::fs::File::open(&self.state) else {
            return;
        };
        let mut bytes = Vec::new();
        f.seek(std::io::SeekFrom::Start(self.offset)).unwrap();
        f.read_to_end(&mut bytes).unwrap();
        // A line being written is left for the next read.
        let Some(end) = bytes.iter().rposition(|&b| b == b'\n') else {
            return;
        };
        self.offset += end as u64 + 1;
        for line in bytes[..end].split(|&b| b == b'\n') {
            let v = serde_json::from_slice(line).expect("a --ui-state line is JSON");
            self.pending.push_back(v);
        }
    }

    /// The newest state the editor wrote (every line before it passed over).
    pub fn latest(&mut self) -> Value {
        self.read_new();
        if let Some(v) = self.pending.pop_back() {
            self.last = Some(v);
        }
        self.pending.clear();
        self.last
            .clone()
            .expect("a first frame (Driver::new waits for it)")
    }

    /// The editor's window id.
    pub fn window(&self) -> &str {
        &self.window
    }

    /// Waits for a state `ok` accepts: the newest looked at, else each line written since in
    /// turn (a state that lasted one frame is seen too); fails naming `what` and the last state
    /// if the editor ends or none comes in time.
    pub fn wait(&mut self, what: &str, ok: impl Fn(&Value) -> bool) -> Value {
        if let Some(v) = self.last.as_ref().filter(|v| ok(v)) {
            return v.clone();
        }
        let start = Instant::now();
        loop {
            self.read_new();
            while let Some(v) = self.pending.pop_front() {
                let hit = ok(&v);
                self.last = Some(v);
                if hit {
                    return self.last.clone().unwrap();
                }
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                super::ended(&mut self.child, status, what);
            }
            assert!(
                start.elapsed() < PATIENCE,
                "no frame with {what} in {PATIENCE:?}; the last: {:?}",
                self.last
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until `n` more frames are presented (after the newest written now).
    pub fn frames(&mut self, n: u64) {
        let from = self.latest()["frame"].as_u64().unwrap();
        self.wait(&format!("frame {}", from + n), |v| {
            v["frame"].as_u64().unwrap() >= from + n
        });
    }

    /// Moves the pointer to window pixel (`px`, `py`) and waits for a frame that saw it there
    /// (hovered widgets know it then).
    pub fn point(&mut self, px: i32, py: i32) {
        let (sx, sy) = (px.to_string(), py.to_string());
        xdotool(self.x, &["mousemove", "--window", &self.window, &sx, &sy]);
        self.wait(&format!("the pointer at ({px}, {py})"), |v| {
            let p = &v["pointer"];
            (p[0].as_f64().unwrap() - f64::from(px)).abs() < 0.5
                && (p[1].as_f64().unwrap() - f64::from(py)).abs() < 0.5
        });
        self.frames(1);
    }

    /// The left button down, waited for.
    pub fn press(&mut self) {
        xdotool(self.x, &["mousedown", "1"]);
        self.wait("the button down", |v| v["button"] == true);
    }

    /// The left button up, waited for, and a frame after it.
    pub fn release(&mut self) {
        xdotool(self.x, &["mouseup", "1"]);
        self.wait("the button up", |v| v["button"] == false);
        self.frames(1);
    }

    /// A click at (`px`, `py`), each part seen by a frame.
    pub fn click(&mut self, px: i32, py: i32) {
        self.point(px, py);
        self.press();
        self.release();
    }

    /// A drag from `a` to `b` in ten moves, each seen by a frame.
    pub fn drag(&mut self, a: (i32, i32), b: (i32, i32)) {
        self.point(a.0, a.1);
        self.press();
        for i in 1..=10 {
            self.point(a.0 + (b.0 - a.0) * i / 10, a.1 + (b.1 - a.1) * i / 10);
        }
        self.release();
    }

    /// `n` turns of the wheel down at (`px`, `py`), each seen by a frame.
    pub fn wheel_down(&mut self, px: i32, py: i32, n: usize) {
        self.point(px, py);
        for _ in 0..n {
            xdotool(self.x, &["click", "5"]);
            self.frames(2);
        }
    }

    /// Key (chord) `k`, and two frames after it.
    pub fn key(&mut self, k: &str) {
        xdotool(self.x, &["key", k]);
        self.frames(2);
    }

    /// Ctrl+E, `name` typed over the offered one, Enter: the heights exported into `dir`, the
    /// editor's folder. Waits for the file; returns its path.
    pub fn export_heights(&mut self, dir: &Path, name: &str) -> PathBuf {
        self.key("ctrl+e");
        self.wait("the export browser", |v| v["browser"] == "Export heights");
        self.key("ctrl+a");
        self.type_text(name);
        self.key("Return");
        let path = dir.join(name);
        super::wait_for_file(&mut self.child, &path);
        path
    }

    /// `text` typed a character at a time, two frames each (imgui takes about a key a frame).
    pub fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            xdotool(self.x, &["type", &c.to_string()]);
            self.frames(2);
        }
    }
}

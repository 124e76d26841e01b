//! Frame captures in RenderDoc through its in-application API (the `renderdoc` crate), when Scarp
//! runs under RenderDoc (the library is already loaded into the process: `renderdoccmd capture`
//! or the RenderDoc UI's launch). Elsewhere every call says why no capture happens, and nothing
//! fails. Vulkan objects carry debug names ([`super::Gpu::set_name`]), so captures show them.

use renderdoc::{RenderDoc, V110};

/// RenderDoc's in-application API, when Scarp runs under RenderDoc.
pub struct Capture {
    api: Option<RenderDoc<V110>>,
}

/// Why nothing is captured without RenderDoc.
pub const NOT_ATTACHED: &str =
    "RenderDoc is not attached: no capture (launch Scarp from RenderDoc \
     or with `renderdoccmd capture`)";

impl Capture {
    /// Looks for RenderDoc in the process (never loads it).
    pub fn new() -> Self {
        Self {
            api: RenderDoc::new().ok(),
        }
    }

    /// Whether RenderDoc is attached.
    pub fn attached(&self) -> bool {
        self.api.is_some()
    }

    /// Captures the next presented frame (windowed): every submission between this present and
    /// the next, brush passes included. Returns what happened, for the user.
    pub fn trigger(&mut self) -> String {
        match &mut self.api {
            Some(rd) => {
                rd.trigger_capture();
                "capturing the next frame in RenderDoc".into()
            }
            None => NOT_ATTACHED.into(),
        }
    }

    /// Starts capturing everything submitted until [`Self::end`] (headless: no presents to
    /// delimit a frame). False without RenderDoc.
    pub fn start(&mut self) -> bool {
        match &mut self.api {
            Some(rd) => {
                rd.start_frame_capture(std::ptr::null::<std::ffi::c_void>(), std::ptr::null());
                true
            }
            None => false,
        }
    }

    /// Ends the capture begun by [`Self::start`]; returns where RenderDoc wrote it, or why
    /// nothing was captured.
    pub fn end(&mut self) -> String {
        match &mut self.api {
            Some(rd) => {
                rd.end_frame_capture(std::ptr::null::<std::ffi::c_void>(), std::ptr::null());
                match rd
                    .get_num_captures()
                    .checked_sub(1)
                    .and_then(|i| rd.get_capture(i))
                {
                    Some((path, _)) => format!("RenderDoc capture -> {}", path.display()),
                    None => "RenderDoc made no capture".into(),
                }
            }
            None => NOT_ATTACHED.into(),
        }
    }
}

impl Default for Capture {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_renderdoc_every_call_says_so_and_nothing_fails() {
        let mut c = Capture::new();
        if c.attached() {
            return; // run under RenderDoc: nothing to check here
        }
        assert_eq!(c.trigger(), NOT_ATTACHED);
        assert!(!c.start());
        assert_eq!(c.end(), NOT_ATTACHED);
    }
}

//! Pen pressure on X11 through XInput2: winit 0.30 reports no pen pressure there, so the editor
//! opens its own connection to the X server, finds the devices with an "Abs Pressure" valuator
//! (tablet pens and erasers), listens to their motion and button events on the editor's window,
//! and normalizes the valuator by its range. Elsewhere, and where no pen is found, pressure comes
//! from winit's touch force (Windows, iOS, Android, the web) or is full.

/// The valuator label of a pen's pressure (the X server's wacom and libinput drivers).
pub const PRESSURE_LABEL: &str = "Abs Pressure";

/// `value` of a valuator whose range is `min..=max`, mapped onto 0..=1 (clamped; 1 when the
/// range is empty or not finite: such a device says nothing about pressure).
pub fn normalize(value: f64, min: f64, max: f64) -> f32 {
    if !(min.is_finite() && max.is_finite() && max > min && value.is_finite()) {
        return 1.0;
    }
    ((value - min) / (max - min)).clamp(0.0, 1.0) as f32
}

/// Of a device's valuators (label, min, max), in order, the pressure one: its number and range.
pub fn pressure_valuator(valuators: &[(String, f64, f64)]) -> Option<(usize, f64, f64)> {
    valuators
        .iter()
        .enumerate()
        .find(|(_, (label, _, _))| label == PRESSURE_LABEL)
        .map(|(i, (_, min, max))| (i, *min, *max))
}

/// The value of valuator `number` in an event's valuator state: the mask says which valuators
/// the event carries, and `values` holds theirs, in order.
pub fn valuator_value(mask: &[u8], values: &[f64], number: usize) -> Option<f64> {
    let set = |i: usize| mask.get(i / 8).is_some_and(|b| b & (1 << (i % 8)) != 0);
    if !set(number) {
        return None;
    }
    let index = (0..number).filter(|&i| set(i)).count();
    values.get(index).copied()
}

/// A pen's pressure valuator.
#[derive(Clone, Debug, PartialEq)]
pub struct PenDevice {
    pub id: i32,
    pub name: String,
    pub number: usize,
    pub min: f64,
    pub max: f64,
}

#[cfg(target_os = "linux")]
pub use x11::PenReader;

/// No XInput2 away from Linux: pressure comes from winit's touch force.
#[cfg(not(target_os = "linux"))]
pub struct PenReader {
    pub devices: Vec<PenDevice>,
}

#[cfg(not(target_os = "linux"))]
impl PenReader {
    pub fn open(_display: Option<&str>, _window: u64) -> Result<Self, String> {
        Err("XInput2 is X11's (Linux)".into())
    }
    pub fn poll(&mut self) -> Option<f32> {
        None
    }
}

#[cfg(target_os = "linux")]
mod x11 {
    use super::{normalize, pressure_valuator, valuator_value, PenDevice};
    use std::ffi::{CStr, CString};
    use x11_dl::xinput2::{self, XInput2};
    use x11_dl::xlib::{self, Xlib};

    /// Pens on the X server and the last pressure one of them reported.
    pub struct PenReader {
        xlib: Xlib,
        xi: XInput2,
        display: *mut xlib::Display,
        opcode: i32,
        pub devices: Vec<PenDevice>,
        /// The last pressure a pen reported.
        pressure: Option<f32>,
        /// Whether a pen touches the tablet (its first button is down).
        down: bool,
    }

    impl PenReader {
        /// Connects to the X server `display` (None: `DISPLAY`), finds the pens and listens to
        /// them on `window`. Errors say why there is no XInput2 here.
        pub fn open(display: Option<&str>, window: u64) -> Result<Self, String> {
            let xlib = Xlib::open().map_err(|e| format!("libX11: {e}"))?;
            let xi = XInput2::open().map_err(|e| format!("libXi: {e}"))?;
            let name = display
                .map(|d| CString::new(d).map_err(|_| format!("display name {d:?}")))
                .transpose()?;
            // SAFETY: plain Xlib calls on a connection this struct owns and closes on drop;
            // every pointer the server returns is read within its documented lifetime and
            // freed with the matching call.
            unsafe {
                let display =
                    (xlib.XOpenDisplay)(name.as_ref().map_or(std::ptr::null(), |n| n.as_ptr()));
                if display.is_null() {
                    return Err("cannot connect to the X server".into());
                }
                let mut reader = Self {
                    xlib,
                    xi,
                    display,
                    opcode: 0,
                    devices: Vec::new(),
                    pressure: None,
                    down: false,
                };
                let name = CString::new("XInputExtension").expect("no NUL");
                let (mut event, mut error) = (0, 0);
                if (reader.xlib.XQueryExtension)(
                    display,
                    name.as_ptr(),
                    &mut reader.opcode,
                    &mut event,
                    &mut error,
                ) == 0
                {
                    return Err("the X server has no XInput extension".into());
                }
                let (mut major, mut minor) = (2, 2);
                if (reader.xi.XIQueryVersion)(display, &mut major, &mut minor) != 0 {
                    return Err(format!("the X server has XInput {major}.{minor}, not 2"));
                }
                reader.devices = reader.pens();
                reader.listen(window);
                Ok(reader)
            }
        }

        /// Every device with a pressure valuator.
        unsafe fn pens(&self) -> Vec<PenDevice> {
            let mut n = 0;
            let info = (self.xi.XIQueryDevice)(self.display, xinput2::XIAllDevices, &mut n);
            if info.is_null() {
                return Vec::new();
            }
            let mut pens = Vec::new();
            for d in std::slice::from_raw_parts(info, n.max(0) as usize) {
                let classes = std::slice::from_raw_parts(d.classes, d.num_classes.max(0) as usize);
                let mut valuators = Vec::new();
                for &c in classes {
                    if (*c)._type != xinput2::XIValuatorClass {
                        continue;
                    }
                    let v = &*(c as *const xinput2::XIValuatorClassInfo);
                    let label = self.atom_name(v.label);
                    let number = v.number.max(0) as usize;
                    if valuators.len() <= number {
                        valuators.resize(number + 1, (String::new(), 0.0, 0.0));
                    }
                    valuators[number] = (label, v.min, v.max);
                }
                if let Some((number, min, max)) = pressure_valuator(&valuators) {
                    pens.push(PenDevice {
                        id: d.deviceid,
                        name: CStr::from_ptr(d.name).to_string_lossy().into_owned(),
                        number,
                        min,
                        max,
                    });
                }
            }
            (self.xi.XIFreeDeviceInfo)(info);
            pens
        }

        unsafe fn atom_name(&self, atom: xlib::Atom) -> String {
            if atom == 0 {
                return String::new();
            }
            let p = (self.xlib.XGetAtomName)(self.display, atom);
            if p.is_null() {
                return String::new();
            }
            let s = CStr::from_ptr(p).to_string_lossy().into_owned();
            (self.xlib.XFree)(p.cast());
            s
        }

        /// Asks for the pens' motion and button events on `window` (this connection's own
        /// selection: the window's other clients keep theirs).
        unsafe fn listen(&self, window: u64) {
            for pen in &self.devices {
                let mut bits = [0u8; 4];
                for e in [
                    xinput2::XI_Motion,
                    xinput2::XI_ButtonPress,
                    xinput2::XI_ButtonRelease,
                ] {
                    bits[(e >> 3) as usize] |= 1 << (e & 7);
                }
                let mut mask = xinput2::XIEventMask {
                    deviceid: pen.id,
                    mask_len: bits.len() as i32,
                    mask: bits.as_mut_ptr(),
                };
                (self.xi.XISelectEvents)(self.display, window as _, &mut mask, 1);
            }
            (self.xlib.XFlush)(self.display);
        }

        /// Reads the events that came in; returns the pressure of the pen touching the tablet
        /// (None while none does: a mouse then paints at full pressure).
        pub fn poll(&mut self) -> Option<f32> {
            // SAFETY: as in `open`; event data is read between XGetEventData and
            // XFreeEventData.
            unsafe {
                while (self.xlib.XPending)(self.display) > 0 {
                    let mut event: xlib::XEvent = std::mem::zeroed();
                    (self.xlib.XNextEvent)(self.display, &mut event);
                    let mut cookie = event.generic_event_cookie;
                    if cookie.type_ != xlib::GenericEvent || cookie.extension != self.opcode {
                        continue;
                    }
                    if (self.xlib.XGetEventData)(self.display, &mut cookie) == 0 {
                        continue;
                    }
                    if matches!(
                        cookie.evtype,
                        xinput2::XI_Motion | xinput2::XI_ButtonPress | xinput2::XI_ButtonRelease
                    ) {
                        let e = &*(cookie.data as *const xinput2::XIDeviceEvent);
                        if let Some(pen) = self.devices.iter().find(|p| p.id == e.sourceid) {
                            if e.detail == 1 && cookie.evtype != xinput2::XI_Motion {
                                self.down = cookie.evtype == xinput2::XI_ButtonPress;
                            }
                            let v = &e.valuators;
                            let mask =
                                std::slice::from_raw_parts(v.mask, v.mask_len.max(0) as usize);
                            let set: usize = mask.iter().map(|b| b.count_ones() as usize).sum();
                            let values = std::slice::from_raw_parts(v.values, set);
                            if let Some(value) = valuator_value(mask, values, pen.number) {
                                self.pressure = Some(normalize(value, pen.min, pen.max));
                            }
                        }
                    }
                    (self.xlib.XFreeEventData)(self.display, &mut cookie);
                }
            }
            self.pressure.filter(|_| self.down)
        }
    }

    impl Drop for PenReader {
        fn drop(&mut self) {
            // SAFETY: the connection was opened in `open` and is closed once.
            unsafe {
                (self.xlib.XCloseDisplay)(self.display);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_valuator_is_mapped_from_its_range_onto_0_to_1() {
        assert_eq!(normalize(0.0, 0.0, 2047.0), 0.0);
        assert_eq!(normalize(2047.0, 0.0, 2047.0), 1.0);
        assert!((normalize(1023.5, 0.0, 2047.0) - 0.5).abs() < 1e-6);
        assert!((normalize(-512.0, -1024.0, 1024.0) - 0.25).abs() < 1e-6);
        // Past the range: clamped.
        assert_eq!(normalize(5000.0, 0.0, 2047.0), 1.0);
        assert_eq!(normalize(-3.0, 0.0, 2047.0), 0.0);
        // No range to speak of: full pressure.
        assert_eq!(normalize(3.0, 5.0, 5.0), 1.0);
        assert_eq!(normalize(3.0, 0.0, f64::NAN), 1.0);
        assert_eq!(normalize(f64::NAN, 0.0, 1.0), 1.0);
    }

    #[test]
    fn the_pressure_valuator_is_found_by_its_label() {
        let v = |l: &str, max: f64| (l.to_string(), 0.0, max);
        let pen = [
            v("Abs X", 44704.0),
            v("Abs Y", 27940.0),
            v("Abs Pressure", 65535.0),
            v("Abs Tilt X", 64.0),
        ];
        assert_eq!(pressure_valuator(&pen), Some((2, 0.0, 65535.0)));
        let mouse = [v("Rel X", -1.0), v("Rel Y", -1.0)];
        assert_eq!(pressure_valuator(&mouse), None);
    }

    #[test]
    fn an_events_values_are_packed_by_its_valuator_mask() {
        // Valuators 0, 1 and 2 set (x, y, pressure), then 9.
        let mask = [0b0000_0111, 0b0000_0010];
        let values = [100.0, 200.0, 3000.0, 7.0];
        assert_eq!(valuator_value(&mask, &values, 2), Some(3000.0));
        assert_eq!(valuator_value(&mask, &values, 9), Some(7.0));
        assert_eq!(valuator_value(&mask, &values, 3), None);
        assert_eq!(valuator_value(&mask, &values, 40), None);
        // Pressure alone (x and y unchanged).
        assert_eq!(valuator_value(&[0b100], &[0.5], 2), Some(0.5));
    }
}

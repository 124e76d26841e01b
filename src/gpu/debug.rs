//! The validation messenger. It prints every warning and error the validation layers (or the
//! loader) report and counts them, so tests can fail on any message: validation is a test oracle.
//! The counter lives in a `Box` whose address is the messenger's user data; the context keeps the
//! box alive until after the messenger and the instance are destroyed.

use ash::vk;
use std::ffi::CStr;
use std::sync::atomic::{AtomicU64, Ordering};

/// Counts of messages seen by the messenger.
#[derive(Default)]
pub struct MessageCounter {
    warnings: AtomicU64,
    errors: AtomicU64,
}

impl MessageCounter {
    /// Warnings plus errors reported so far.
    pub fn total(&self) -> u64 {
        self.warnings.load(Ordering::Relaxed) + self.errors.load(Ordering::Relaxed)
    }
}

/// Messenger create-info counting into `counter`; also chained into instance creation so messages
/// of `vkCreateInstance`/`vkDestroyInstance` are counted too.
pub(crate) fn messenger_info(
    counter: &MessageCounter,
) -> vk::DebugUtilsMessengerCreateInfoEXT<'static> {
    vk::DebugUtilsMessengerCreateInfoEXT::default()
        .message_severity(
            vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
        )
        .message_type(
            vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
        )
        .pfn_user_callback(Some(on_message))
        .user_data(counter as *const MessageCounter as *mut std::ffi::c_void)
}

unsafe extern "system" fn on_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    kind: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut std::ffi::c_void,
) -> vk::Bool32 {
    // SAFETY: `user` is the `MessageCounter` registered in `messenger_info`, kept alive by the
    // context for as long as the messenger exists.
    let counter = unsafe { &*(user as *const MessageCounter) };
    if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) {
        counter.errors.fetch_add(1, Ordering::Relaxed);
    } else {
        counter.warnings.fetch_add(1, Ordering::Relaxed);
    }
    // SAFETY: the layer passes a valid callback-data struct whose strings are NUL-terminated or null.
    let message = unsafe {
        data.as_ref()
            .filter(|d| !d.p_message.is_null())
            .map(|d| CStr::from_ptr(d.p_message).to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    eprintln!("[vulkan {severity:?} {kind:?}] {message}");
    vk::FALSE
}

//! The [`Gpu`] context: instance, optional validation messenger, one device with one queue, the
//! memory allocator, a command pool and a nearest sampler.
//!
//! Device choice: `SCARP_GPU=<index|name substring>` picks one of the devices `scarp devices`
//! lists; without it a discrete GPU is preferred, then integrated, virtual and CPU (lavapipe).
//! Any device with Vulkan 1.2 and synchronization2 (core in 1.3, else `VK_KHR_synchronization2`)
//! and a compute queue will do.
//!
//! Lifetime: resources hold an `Arc<Gpu>`, so the context outlives all of them. Its `Drop` waits
//! for the device to idle, drops the allocator explicitly (it must go before the device), then
//! destroys everything else in reverse order of creation.

use super::debug::{messenger_info, MessageCounter};
use super::error::{GpuError, Result};
use super::retire::{PoolSizes, Retirement, SPARE_POOLS_PER_SIZES};
use ash::vk;
use gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex, MutexGuard};

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// How to create a [`Gpu`].
#[derive(Clone, Debug, Default)]
pub struct GpuOptions {
    /// Enable VK_LAYER_KHRONOS_validation with synchronization validation and count its messages.
    pub validation: bool,
    /// Device selector: an index into [`list_devices`] or a case-insensitive name substring.
    pub selector: Option<String>,
    /// Instance extensions a window surface needs (from `ash_window`); empty when headless.
    pub window_extensions: Vec<&'static CStr>,
    /// Enable `VK_KHR_swapchain` on the device (a window will present).
    pub swapchain: bool,
}

impl GpuOptions {
    /// Options from the environment: `SCARP_VALIDATION=1` and `SCARP_GPU`.
    pub fn from_env() -> Self {
        let validation = std::env::var("SCARP_VALIDATION")
            .is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"));
        let selector = std::env::var("SCARP_GPU")
            .ok()
            .filter(|s| !s.trim().is_empty());
        Self {
            validation,
            selector,
            ..Self::default()
        }
    }

    /// Options for tests: validation always on, device from `SCARP_GPU` if set.
    pub fn for_tests() -> Self {
        Self {
            validation: true,
            ..Self::from_env()
        }
    }
}

/// What a device is, for reports and benchmark records.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    pub name: String,
    pub device_type: vk::PhysicalDeviceType,
    pub driver_name: String,
    pub driver_info: String,
    pub api_version: u32,
    /// Nanoseconds per timestamp tick.
    pub timestamp_period_ns: f64,
    /// Valid bits of the queue's timestamps; 0 means no timestamps.
    pub timestamp_valid_bits: u32,
    pub max_compute_workgroups: [u32; 3],
    /// Most invocations one workgroup may have.
    pub max_compute_workgroup_invocations: u32,
    pub max_storage_buffer_range: u32,
    /// Storage images one shader stage may bind.
    pub max_per_stage_storage_images: u32,
    /// Largest width and height of a 2D image.
    pub max_image_dimension_2d: u32,
    pub min_storage_buffer_offset_alignment: u64,
    /// Size of the largest device-local memory heap, bytes.
    pub device_local_bytes: u64,
}

impl DeviceInfo {
    pub fn api_version_string(&self) -> String {
        format!(
            "{}.{}.{}",
            vk::api_version_major(self.api_version),
            vk::api_version_minor(self.api_version),
            vk::api_version_patch(self.api_version)
        )
    }
}

impl std::fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({:?}, Vulkan {}, {} {})",
            self.name,
            self.device_type,
            self.api_version_string(),
            self.driver_name,
            self.driver_info
        )
    }
}

/// synchronization2 entry points: core on 1.3 devices, the KHR extension on 1.2 ones.
enum Sync2 {
    Core,
    Khr(ash::khr::synchronization2::Device),
}

/// The Vulkan context. Shared as `Arc<Gpu>` by every resource made from it.
pub struct Gpu {
    _entry: ash::Entry,
    instance: ash::Instance,
    debug_utils: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    debug_device: Option<ash::ext::debug_utils::Device>,
    /// VK_EXT_calibrated_timestamps, enabled where the device's clock calibrates against
    /// CLOCK_MONOTONIC.
    calibrated: Option<ash::ext::calibrated_timestamps::Device>,
    // Shared so its address stays fixed for the messenger's user-data pointer, also while a failed
    // construction destroys the instance.
    messages: Arc<MessageCounter>,
    physical: vk::PhysicalDevice,
    device: ash::Device,
    sync2: Sync2,
    queue: Mutex<vk::Queue>,
    queue_family: u32,
    allocator: ManuallyDrop<Mutex<Allocator>>,
    command_pool: Mutex<vk::CommandPool>,
    /// Unsignalled fences for submissions to reuse.
    fences: Mutex<Vec<vk::Fence>>,
    /// Detached submissions and the resources dropped while they may run.
    retirement: Mutex<Retirement>,
    /// Descriptor pools of released sets, reset, by their sizes: the next set of the same sizes
    /// reuses one instead of making a pool.
    spare_pools: Mutex<HashMap<PoolSizes, Vec<vk::DescriptorPool>>>,
    nearest_sampler: vk::Sampler,
    info: DeviceInfo,
    /// `shaderStorageImageExtendedFormats` was enabled (r16 storage images, among others).
    extended_storage_formats: bool,
    /// `dynamicRendering` was enabled (Vulkan 1.3 devices): the terrain renderer needs it.
    dynamic_rendering: bool,
    /// `fillModeNonSolid` was enabled: wireframe views.
    fill_mode_non_solid: bool,
    /// `storageBuffer8BitAccess` was enabled: byte-sized storage buffer elements.
    storage_buffer_8bit: bool,
}

/// One device as [`list_devices`] reports it.
#[derive(Clone, Debug)]
pub struct DeviceSummary {
    pub index: usize,
    pub name: String,
    pub device_type: vk::PhysicalDeviceType,
    pub api_version: u32,
    pub usable: Result<(), String>,
}

/// Lists the Vulkan devices of this machine (no device is created).
pub fn list_devices() -> Result<Vec<DeviceSummary>> {
    // SAFETY: loading the system Vulkan loader; the entry is dropped at the end of this function
    // after the instance is destroyed.
    let entry = unsafe { ash::Entry::load()? };
    let instance = create_instance(&entry, false, None, &[])?;
    let result = enumerate(&instance);
    // SAFETY: no objects created from this instance remain.
    unsafe { instance.destroy_instance(None) };
    result.map(|cands| {
        cands
            .into_iter()
            .map(|c| DeviceSummary {
                index: c.index,
                name: c.name,
                device_type: c.props.device_type,
                api_version: c.props.api_version,
                usable: c.usable.map(|_| ()),
            })
            .collect()
    })
}

struct Candidate {
    index: usize,
    physical: vk::PhysicalDevice,
    props: vk::PhysicalDeviceProperties,
    name: String,
    /// Queue family and whether synchronization2 is core, or why the device can't be used.
    usable: std::result::Result<(u32, bool), String>,
}

impl Candidate {
    /// The queue family and whether synchronization2 is core, of a usable candidate.
    fn queue(&self) -> (u32, bool) {
        self.usable.clone().expect("select returns usable devices")
    }
}

fn enumerate(instance: &ash::Instance) -> Result<Vec<Candidate>> {
    // SAFETY: valid instance.
    let physicals = unsafe { instance.enumerate_physical_devices()? };
    let mut out = Vec::new();
    for (index, &physical) in physicals.iter().enumerate() {
        // SAFETY: `physical` comes from this instance.
        let props = unsafe { instance.get_physical_device_properties(physical) };
        let name = props
            .device_name_as_c_str()
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_default();
        let usable = check_device(instance, physical, &props);
        out.push(Candidate {
            index,
            physical,
            props,
            name,
            usable,
        });
    }
    Ok(out)
}

/// Whether `physical` has VK_EXT_calibrated_timestamps with both the device and the
/// CLOCK_MONOTONIC time domains.
fn calibrates_with_monotonic(
    entry: &ash::Entry,
    instance: &ash::Instance,
    physical: vk::PhysicalDevice,
) -> bool {
    // SAFETY: `physical` comes from `instance`.
    let has_ext =
        unsafe { instance.enumerate_device_extension_properties(physical) }.is_ok_and(|exts| {
            exts.iter()
                .any(|e| e.extension_name_as_c_str() == Ok(ash::ext::calibrated_timestamps::NAME))
        });
    if !has_ext || !cfg!(unix) {
        return false;
    }
    let ext = ash::ext::calibrated_timestamps::Instance::new(entry, instance);
    // SAFETY: as above; the extension is present.
    let domains = unsafe { ext.get_physical_device_calibrateable_time_domains(physical) };
    domains.is_ok_and(|d| {
        d.contains(&vk::TimeDomainEXT::DEVICE) && d.contains(&vk::TimeDomainEXT::CLOCK_MONOTONIC)
    })
}

fn check_device(
    instance: &ash::Instance,
    physical: vk::PhysicalDevice,
    props: &vk::PhysicalDeviceProperties,
) -> std::result::Result<(u32, bool), String> {
    if props.api_version < vk::API_VERSION_1_2 {
        return Err("needs Vulkan 1.2".into());
    }
    // SAFETY: `physical` comes from this instance.
    let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
    // Prefer a family that also does graphics: the editor draws on the same queue.
    let family = families
        .iter()
        .position(|f| {
            f.queue_flags
                .contains(vk::QueueFlags::COMPUTE | vk::QueueFlags::GRAPHICS)
        })
        .or_else(|| {
            families
                .iter()
                .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
        })
        .ok_or("no compute queue")? as u32;
    let core_sync2 = props.api_version >= vk::API_VERSION_1_3;
    if !core_sync2 {
        // SAFETY: `physical` comes from this instance.
        let exts = unsafe { instance.enumerate_device_extension_properties(physical) }
            .map_err(|e| e.to_string())?;
        let has = exts.iter().any(|e| {
            e.extension_name_as_c_str()
                .is_ok_and(|n| n == ash::khr::synchronization2::NAME)
        });
        if !has {
            return Err("no synchronization2".into());
        }
    }
    Ok((family, core_sync2))
}

fn create_instance(
    entry: &ash::Entry,
    validation: bool,
    counter: Option<&MessageCounter>,
    window_extensions: &[&'static CStr],
) -> Result<ash::Instance> {
    // SAFETY: plain query of the loader.
    let loader_version =
        unsafe { entry.try_enumerate_instance_version()? }.unwrap_or(vk::API_VERSION_1_0);
    let api_version = loader_version.min(vk::API_VERSION_1_3);
    if api_version < vk::API_VERSION_1_2 {
        return Err(GpuError::NoDevice(
            "the Vulkan loader is older than 1.2".into(),
        ));
    }
    let app = vk::ApplicationInfo::default()
        .application_name(c"scarp")
        .engine_name(c"scarp")
        .api_version(api_version);
    let mut layers: Vec<*const std::ffi::c_char> = Vec::new();
    let mut extensions: Vec<*const std::ffi::c_char> =
        window_extensions.iter().map(|e| e.as_ptr()).collect();
    if validation {
        // SAFETY: plain query of the loader.
        let available = unsafe { entry.enumerate_instance_layer_properties()? };
        if !available
            .iter()
            .any(|l| l.layer_name_as_c_str().is_ok_and(|n| n == VALIDATION_LAYER))
        {
            return Err(GpuError::NoValidationLayer);
        }
        layers.push(VALIDATION_LAYER.as_ptr());
        extensions.push(ash::ext::debug_utils::NAME.as_ptr());
        extensions.push(ash::ext::validation_features::NAME.as_ptr());
    }
    let enables = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION];
    let mut features = vk::ValidationFeaturesEXT::default().enabled_validation_features(&enables);
    let mut messenger = counter.map(messenger_info);
    let mut info = vk::InstanceCreateInfo::default()
        .application_info(&app)
        .enabled_layer_names(&layers)
        .enabled_extension_names(&extensions);
    if validation {
        info = info.push_next(&mut features);
        if let Some(m) = messenger.as_mut() {
            info = info.push_next(m);
        }
    }
    // SAFETY: every pointer in `info` outlives this call.
    Ok(unsafe { entry.create_instance(&info, None)? })
}

/// The debug-utils loader and messenger of a context with validation.
type DebugMessenger = (ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT);

/// The optional device features and extensions, and whether each was enabled.
struct Enabled {
    /// `shaderStorageImageExtendedFormats` (r16 storage images, among others).
    extended_storage_formats: bool,
    /// `fillModeNonSolid`: wireframe views.
    fill_mode_non_solid: bool,
    /// `dynamicRendering` (Vulkan 1.3 devices).
    dynamic_rendering: bool,
    /// `storageBuffer8BitAccess` (Vulkan 1.2 core).
    storage_buffer_8bit: bool,
    /// VK_EXT_calibrated_timestamps.
    calibrated: bool,
}

/// Creates the logical device of `chosen`: one queue of its family, synchronization2 (core or
/// the KHR extension), the optional features it has, the swapchain extension when asked, and
/// calibrated timestamps where the device pairs its clock with CLOCK_MONOTONIC.
fn create_device(
    entry: &ash::Entry,
    instance: &ash::Instance,
    chosen: &Candidate,
    swapchain: bool,
) -> Result<(ash::Device, Enabled)> {
    let (queue_family, core_sync2) = chosen.queue();
    let physical = chosen.physical;
    let priorities = [1.0f32];
    let queue_info = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(queue_family)
        .queue_priorities(&priorities)];
    let mut dev_exts: Vec<*const std::ffi::c_char> = Vec::new();
    let mut f13 = vk::PhysicalDeviceVulkan13Features::default().synchronization2(true);
    let mut f_khr = vk::PhysicalDeviceSynchronization2Features::default().synchronization2(true);
    // SAFETY: `physical` comes from `instance`.
    let supported = unsafe { instance.get_physical_device_features(physical) };
    let extended_storage_formats = supported.shader_storage_image_extended_formats == vk::TRUE;
    let fill_mode_non_solid = supported.fill_mode_non_solid == vk::TRUE;
    let features = vk::PhysicalDeviceFeatures::default()
        .shader_storage_image_extended_formats(extended_storage_formats)
        .fill_mode_non_solid(fill_mode_non_solid);
    let mut supported_8bit = vk::PhysicalDevice8BitStorageFeatures::default();
    let mut supported2 = vk::PhysicalDeviceFeatures2::default().push_next(&mut supported_8bit);
    // SAFETY: `physical` comes from `instance`, a Vulkan 1.2 device (`enumerate` checks).
    unsafe { instance.get_physical_device_features2(physical, &mut supported2) };
    let storage_buffer_8bit = supported_8bit.storage_buffer8_bit_access == vk::TRUE;
    let mut f8 = vk::PhysicalDevice8BitStorageFeatures::default().storage_buffer8_bit_access(true);
    // Dynamic rendering is core (and required) from Vulkan 1.3: the renderer needs it.
    let dynamic_rendering = core_sync2;
    f13 = f13.dynamic_rendering(dynamic_rendering);
    if swapchain {
        dev_exts.push(ash::khr::swapchain::NAME.as_ptr());
    }
    // Calibrated timestamps (traces), where the device pairs its clock with CLOCK_MONOTONIC.
    let calibrated = calibrates_with_monotonic(entry, instance, physical);
    if calibrated {
        dev_exts.push(ash::ext::calibrated_timestamps::NAME.as_ptr());
    }
    let mut info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queue_info)
        .enabled_features(&features);
    if core_sync2 {
        info = info.push_next(&mut f13);
    } else {
        dev_exts.push(ash::khr::synchronization2::NAME.as_ptr());
        info = info.push_next(&mut f_khr);
    }
    if storage_buffer_8bit {
        info = info.push_next(&mut f8);
    }
    info = info.enabled_extension_names(&dev_exts);
    // SAFETY: `physical` comes from `instance`; all pointers in `info` outlive the call.
    let device = unsafe { instance.create_device(physical, &info, None) }?;
    Ok((
        device,
        Enabled {
            extended_storage_formats,
            fill_mode_non_solid,
            dynamic_rendering,
            storage_buffer_8bit,
            calibrated,
        },
    ))
}

/// What the context makes from its device before any use: the memory allocator, the command
/// pool and the nearest-filtering sampler.
struct DeviceResources {
    allocator: Allocator,
    command_pool: vk::CommandPool,
    nearest_sampler: vk::Sampler,
}

impl DeviceResources {
    /// Makes them; on failure destroys what it made (never the device).
    fn new(
        instance: &ash::Instance,
        device: &ash::Device,
        physical: vk::PhysicalDevice,
        queue_family: u32,
    ) -> Result<Self> {
        let allocator = Allocator::new(&AllocatorCreateDesc {
            instance: instance.clone(),
            device: device.clone(),
            physical_device: physical,
            debug_settings: gpu_allocator::AllocatorDebugSettings {
                log_leaks_on_shutdown: true,
                ..Default::default()
            },
            buffer_device_address: false,
            allocation_sizes: Default::default(),
        })?;
        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(queue_family)
            .flags(
                vk::CommandPoolCreateFlags::TRANSIENT
                    | vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER,
            );
        // SAFETY: valid device.
        let command_pool = match unsafe { device.create_command_pool(&pool_info, None) } {
            Ok(p) => p,
            Err(e) => {
                drop(allocator);
                return Err(e.into());
            }
        };
        let sampler_info = vk::SamplerCreateInfo::default()
            .mag_filter(vk::Filter::NEAREST)
            .min_filter(vk::Filter::NEAREST)
            .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
            .address_mode_u(vk::SamplerAddressMode::REPEAT)
            .address_mode_v(vk::SamplerAddressMode::REPEAT)
            .address_mode_w(vk::SamplerAddressMode::REPEAT)
            .max_lod(0.0);
        // SAFETY: valid device.
        let nearest_sampler = match unsafe { device.create_sampler(&sampler_info, None) } {
            Ok(s) => s,
            Err(e) => {
                // SAFETY: the pool is unused.
                unsafe { device.destroy_command_pool(command_pool, None) };
                drop(allocator);
                return Err(e.into());
            }
        };
        Ok(Self {
            allocator,
            command_pool,
            nearest_sampler,
        })
    }
}

/// What the context tells about `chosen`'s device: name, type, driver, API version, limits,
/// the largest device-local heap and the timestamp bits of `queue_family`.
fn device_info(instance: &ash::Instance, chosen: &Candidate, queue_family: u32) -> DeviceInfo {
    let physical = chosen.physical;
    let mut driver = vk::PhysicalDeviceDriverProperties::default();
    let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut driver);
    // SAFETY: `physical` comes from `instance`; the chain outlives the call.
    unsafe { instance.get_physical_device_properties2(physical, &mut props2) };
    let props = props2.properties;
    // SAFETY: as above.
    let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
    // SAFETY: as above.
    let memory = unsafe { instance.get_physical_device_memory_properties(physical) };
    let device_local_bytes = memory.memory_heaps[..memory.memory_heap_count as usize]
        .iter()
        .filter(|h| h.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL))
        .map(|h| h.size)
        .max()
        .unwrap_or(0);
    DeviceInfo {
        device_local_bytes,
        name: chosen.name.clone(),
        device_type: props.device_type,
        driver_name: driver
            .driver_name_as_c_str()
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_default(),
        driver_info: driver
            .driver_info_as_c_str()
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_default(),
        api_version: props.api_version,
        timestamp_period_ns: f64::from(props.limits.timestamp_period),
        timestamp_valid_bits: families[queue_family as usize].timestamp_valid_bits,
        max_compute_workgroups: props.limits.max_compute_work_group_count,
        max_compute_workgroup_invocations: props.limits.max_compute_work_group_invocations,
        max_storage_buffer_range: props.limits.max_storage_buffer_range,
        max_per_stage_storage_images: props.limits.max_per_stage_descriptor_storage_images,
        max_image_dimension_2d: props.limits.max_image_dimension2_d,
        min_storage_buffer_offset_alignment: props.limits.min_storage_buffer_offset_alignment,
    }
}

impl Gpu {
    /// Creates the context with `options` (see [`GpuOptions::from_env`]).
    pub fn new(options: &GpuOptions) -> Result<Arc<Self>> {
        // SAFETY: loading the system Vulkan loader; `_entry` is kept for the context's lifetime.
        let entry = unsafe { ash::Entry::load()? };
        let messages = Arc::new(MessageCounter::default());
        let instance = create_instance(
            &entry,
            options.validation,
            Some(&messages),
            &options.window_extensions,
        )?;
        // From here on, failures must destroy what exists: build the rest in a helper.
        match Self::finish(entry, instance.clone(), options, messages.clone()) {
            Ok(gpu) => Ok(Arc::new(gpu)),
            Err((e, debug)) => {
                // SAFETY: nothing else was created from the instance (the helper cleaned up).
                unsafe {
                    if let Some((du, m)) = debug {
                        du.destroy_debug_utils_messenger(m, None);
                    }
                    instance.destroy_instance(None);
                }
                Err(e)
            }
        }
    }

    /// Everything after the instance: the messenger, the device and what the context makes
    /// from it. On failure whatever it made is destroyed but the messenger, handed back with
    /// the error to be destroyed with the instance.
    fn finish(
        entry: ash::Entry,
        instance: ash::Instance,
        options: &GpuOptions,
        messages: Arc<MessageCounter>,
    ) -> std::result::Result<Self, (GpuError, Option<DebugMessenger>)> {
        let debug_utils = if options.validation {
            let du = ash::ext::debug_utils::Instance::new(&entry, &instance);
            // SAFETY: the counter outlives the messenger (both owned by the context).
            let m = unsafe { du.create_debug_utils_messenger(&messenger_info(&messages), None) }
                .map_err(|e| (GpuError::from(e), None))?;
            Some((du, m))
        } else {
            None
        };
        let fail = |e: GpuError, debug: &Option<DebugMessenger>| (e, debug.clone());

        let candidates = enumerate(&instance).map_err(|e| fail(e, &debug_utils))?;
        let chosen =
            select(&candidates, options.selector.as_deref()).map_err(|e| fail(e, &debug_utils))?;
        let (queue_family, core_sync2) = chosen.queue();
        let physical = chosen.physical;
        let (device, enabled) = create_device(&entry, &instance, chosen, options.swapchain)
            .map_err(|e| fail(e, &debug_utils))?;
        let sync2 = if core_sync2 {
            Sync2::Core
        } else {
            Sync2::Khr(ash::khr::synchronization2::Device::new(&instance, &device))
        };
        // SAFETY: family/index were requested in `info`.
        let queue = unsafe { device.get_device_queue(queue_family, 0) };

        let made =
            DeviceResources::new(&instance, &device, physical, queue_family).map_err(|e| {
                // SAFETY: nothing created from the device is alive at this point of construction.
                unsafe { device.destroy_device(None) };
                fail(e, &debug_utils)
            })?;
        let info = device_info(&instance, chosen, queue_family);
        let debug_device = debug_utils
            .as_ref()
            .map(|_| ash::ext::debug_utils::Device::new(&instance, &device));
        let calibrated = enabled
            .calibrated
            .then(|| ash::ext::calibrated_timestamps::Device::new(&instance, &device));
        Ok(Self {
            _entry: entry,
            instance,
            debug_utils,
            debug_device,
            calibrated,
            messages,
            physical,
            device,
            sync2,
            queue: Mutex::new(queue),
            queue_family,
            allocator: ManuallyDrop::new(Mutex::new(made.allocator)),
            command_pool: Mutex::new(made.command_pool),
            fences: Mutex::new(Vec::new()),
            retirement: Mutex::new(Retirement::default()),
            spare_pools: Mutex::new(HashMap::new()),
            nearest_sampler: made.nearest_sampler,
            extended_storage_formats: enabled.extended_storage_formats,
            dynamic_rendering: enabled.dynamic_rendering,
            fill_mode_non_solid: enabled.fill_mode_non_solid,
            storage_buffer_8bit: enabled.storage_buffer_8bit,
            info,
        })
    }

    pub fn device(&self) -> &ash::Device {
        &self.device
    }

    /// An unsignalled fence (reused: creating one per submission is slow on some drivers).
    pub(crate) fn take_fence(&self) -> Result<vk::Fence> {
        let reused = self.fences.lock().unwrap_or_else(|p| p.into_inner()).pop();
        match reused {
            Some(f) => Ok(f),
            // SAFETY: valid device.
            None => Ok(unsafe {
                self.device
                    .create_fence(&vk::FenceCreateInfo::default(), None)?
            }),
        }
    }

    /// Gives back a fence whose submission completed (or never happened): reset and kept.
    pub(crate) fn return_fence(&self, fence: vk::Fence) {
        // SAFETY: the fence is not in use by any pending submission.
        match unsafe { self.device.reset_fences(&[fence]) } {
            Ok(()) => self
                .fences
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(fence),
            // SAFETY: as above.
            Err(_) => unsafe { self.device.destroy_fence(fence, None) },
        }
    }

    /// A reset descriptor pool made with `sizes` (one set), if one was given back.
    pub(crate) fn take_spare_pool(&self, sizes: &PoolSizes) -> Option<vk::DescriptorPool> {
        self.spare_pools
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_mut(sizes)
            .and_then(Vec::pop)
    }

    /// How many reset descriptor pools wait to be reused (all sizes).
    pub fn spare_descriptor_pools(&self) -> usize {
        let spare = self.spare_pools.lock().unwrap_or_else(|p| p.into_inner());
        spare.values().map(Vec::len).sum()
    }

    /// Gives back the pool of a released set (no pending submission may use the set): reset
    /// and kept for [`Self::take_spare_pool`], or destroyed beyond [`SPARE_POOLS_PER_SIZES`].
    pub(crate) fn keep_spare_pool(&self, pool: vk::DescriptorPool, sizes: PoolSizes) {
        let mut spare = self.spare_pools.lock().unwrap_or_else(|p| p.into_inner());
        let kept = spare.entry(sizes).or_default();
        // SAFETY: no pending submission uses a set of the pool (the caller's promise).
        let reset = unsafe {
            self.device
                .reset_descriptor_pool(pool, vk::DescriptorPoolResetFlags::empty())
        };
        if reset.is_ok() && kept.len() < SPARE_POOLS_PER_SIZES {
            kept.push(pool);
        } else {
            // SAFETY: as above.
            unsafe { self.device.destroy_descriptor_pool(pool, None) };
        }
    }

    /// The Vulkan loader entry (for surface creation).
    pub fn entry(&self) -> &ash::Entry {
        &self._entry
    }

    /// Whether dynamic rendering is enabled (drawing needs it).
    pub fn dynamic_rendering(&self) -> bool {
        self.dynamic_rendering
    }

    /// Whether wireframe (polygon mode LINE) is available.
    pub fn fill_mode_non_solid(&self) -> bool {
        self.fill_mode_non_solid
    }

    /// Whether storage buffers may hold byte-sized elements (`storageBuffer8BitAccess`).
    pub fn storage_buffer_8bit(&self) -> bool {
        self.storage_buffer_8bit
    }

    /// The raw command pool, for libraries that record their own uploads (imgui's font atlas).
    /// Only while no [`crate::gpu::Recorder`] is alive on another thread.
    pub fn raw_command_pool(&self) -> vk::CommandPool {
        *self.command_pool()
    }

    /// The raw queue, for libraries that submit their own uploads and for presentation.
    pub fn raw_queue(&self) -> vk::Queue {
        *self.queue()
    }

    pub fn instance(&self) -> &ash::Instance {
        &self.instance
    }

    pub fn physical_device(&self) -> vk::PhysicalDevice {
        self.physical
    }

    pub fn queue_family(&self) -> u32 {
        self.queue_family
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// Validation warnings and errors reported so far (0 when validation is off).
    pub fn validation_messages(&self) -> u64 {
        self.messages.total()
    }

    pub fn validation_enabled(&self) -> bool {
        self.debug_utils.is_some()
    }

    /// A GPU timestamp tick and CLOCK_MONOTONIC (ns) sampled together, with the largest
    /// deviation between the two samples (ns); None without calibrated timestamps.
    pub fn calibrated_timestamps(&self) -> Option<(u64, u64, u64)> {
        let ext = self.calibrated.as_ref()?;
        let infos = [
            vk::CalibratedTimestampInfoEXT::default().time_domain(vk::TimeDomainEXT::DEVICE),
            vk::CalibratedTimestampInfoEXT::default()
                .time_domain(vk::TimeDomainEXT::CLOCK_MONOTONIC),
        ];
        // SAFETY: the extension is enabled on this device; both domains are supported.
        let (t, deviation) = unsafe { ext.get_calibrated_timestamps(&infos) }.ok()?;
        Some((t[0], t[1], deviation))
    }

    pub(crate) fn allocator(&self) -> MutexGuard<'_, Allocator> {
        // A panic while holding the lock leaves the allocator usable: take it back.
        self.allocator.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn queue(&self) -> MutexGuard<'_, vk::Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn retirement(&self) -> MutexGuard<'_, Retirement> {
        self.retirement.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn command_pool(&self) -> MutexGuard<'_, vk::CommandPool> {
        self.command_pool.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether compute shaders can read and write storage images of `format` (declared with
    /// its format qualifier).
    pub fn supports_storage_format(&self, format: vk::Format) -> bool {
        // SAFETY: `physical` comes from this instance.
        let props = unsafe {
            self.instance
                .get_physical_device_format_properties(self.physical, format)
        };
        let basic = matches!(
            format,
            vk::Format::R32_SFLOAT
                | vk::Format::R32_UINT
                | vk::Format::R32_SINT
                | vk::Format::R8G8B8A8_UNORM
        );
        props
            .optimal_tiling_features
            .contains(vk::FormatFeatureFlags::STORAGE_IMAGE)
            && (basic || self.extended_storage_formats)
    }

    pub fn nearest_sampler(&self) -> vk::Sampler {
        self.nearest_sampler
    }

    /// Gives a Vulkan object a debug name (shown by validation messages and capture tools).
    pub fn set_name<H: vk::Handle>(&self, handle: H, name: &str) {
        if let Some(du) = &self.debug_device {
            let Ok(cname) = CString::new(name.replace('\0', " ")) else {
                return;
            };
            let info = vk::DebugUtilsObjectNameInfoEXT::default()
                .object_handle(handle)
                .object_name(&cname);
            // SAFETY: `handle` is a live object of this device; naming is advisory, so a failure
            // is ignored.
            let _ = unsafe { du.set_debug_utils_object_name(&info) };
        }
    }

    /// Records a synchronization2 barrier with the entry point this device has.
    pub(crate) fn cmd_pipeline_barrier2(
        &self,
        cmd: vk::CommandBuffer,
        dep: &vk::DependencyInfo<'_>,
    ) {
        // SAFETY: `cmd` is recording on this device; the caller builds a valid dependency.
        unsafe {
            match &self.sync2 {
                Sync2::Core => self.device.cmd_pipeline_barrier2(cmd, dep),
                Sync2::Khr(k) => k.cmd_pipeline_barrier2(cmd, dep),
            }
        }
    }

    /// Writes a timestamp once `stage` of all earlier commands completes.
    pub(crate) fn cmd_write_timestamp2(
        &self,
        cmd: vk::CommandBuffer,
        stage: vk::PipelineStageFlags2,
        pool: vk::QueryPool,
        query: u32,
    ) {
        // SAFETY: `cmd` is recording; `query` is within `pool` and was reset.
        unsafe {
            match &self.sync2 {
                Sync2::Core => self.device.cmd_write_timestamp2(cmd, stage, pool, query),
                Sync2::Khr(k) => k.cmd_write_timestamp2(cmd, stage, pool, query),
            }
        }
    }
}

fn select<'a>(candidates: &'a [Candidate], selector: Option<&str>) -> Result<&'a Candidate> {
    let describe = || {
        candidates
            .iter()
            .map(|c| format!("{}: {}", c.index, c.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(sel) = selector {
        let sel = sel.trim();
        let found = match sel.parse::<usize>() {
            Ok(i) => candidates.iter().find(|c| c.index == i),
            Err(_) => {
                let needle = sel.to_lowercase();
                candidates
                    .iter()
                    .find(|c| c.name.to_lowercase().contains(&needle))
            }
        };
        let c = found.ok_or_else(|| {
            GpuError::NoDevice(format!("SCARP_GPU={sel} matches none of [{}]", describe()))
        })?;
        return match &c.usable {
            Ok(_) => Ok(c),
            Err(why) => Err(GpuError::NoDevice(format!(
                "SCARP_GPU={sel} selects {}, which {why}",
                c.name
            ))),
        };
    }
    let rank = |t: vk::PhysicalDeviceType| match t {
        vk::PhysicalDeviceType::DISCRETE_GPU => 0,
        vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
        vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
        vk::PhysicalDeviceType::CPU => 3,
        _ => 4,
    };
    candidates
        .iter()
        .filter(|c| c.usable.is_ok())
        .min_by_key(|c| (rank(c.props.device_type), c.index))
        .ok_or_else(|| {
            if candidates.is_empty() {
                GpuError::NoDevice(
                    "the loader found no Vulkan driver (Debian: mesa-vulkan-drivers)".into(),
                )
            } else {
                GpuError::NoDevice(format!(
                    "none of [{}] has Vulkan 1.2, synchronization2 and a compute queue",
                    describe()
                ))
            }
        })
}

impl Drop for Gpu {
    fn drop(&mut self) {
        // SAFETY: every resource holds an Arc<Gpu>, so none is alive; after the idle wait the
        // device executes nothing. The allocator is dropped before the device it allocates from.
        unsafe {
            let _ = self.device.device_wait_idle();
            self.retire_all_idle();
            let spare = std::mem::take(
                self.spare_pools
                    .get_mut()
                    .unwrap_or_else(|p| p.into_inner()),
            );
            for pool in spare.into_values().flatten() {
                self.device.destroy_descriptor_pool(pool, None);
            }
            self.device.destroy_sampler(self.nearest_sampler, None);
            for &f in self.fences.lock().unwrap_or_else(|p| p.into_inner()).iter() {
                self.device.destroy_fence(f, None);
            }
            self.device.destroy_command_pool(*self.command_pool(), None);
            ManuallyDrop::drop(&mut self.allocator);
            self.device.destroy_device(None);
            if let Some((du, m)) = self.debug_utils.take() {
                du.destroy_debug_utils_messenger(m, None);
            }
            self.instance.destroy_instance(None);
        }
    }
}

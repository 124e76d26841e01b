//! `scarp devices`: the Vulkan devices `SCARP_GPU` can select.

use anyhow::Result;

pub fn run() -> Result<()> {
    let devices = crate::gpu::list_devices()?;
    if devices.is_empty() {
        println!("no Vulkan devices");
    }
    for d in devices {
        let usable = match &d.usable {
            Ok(()) => "usable".to_string(),
            Err(why) => format!("unusable: {why}"),
        };
        println!(
            "{}: {} ({:?}, Vulkan {}.{}) {usable}",
            d.index,
            d.name,
            d.device_type,
            crate::gpu::vk::api_version_major(d.api_version),
            crate::gpu::vk::api_version_minor(d.api_version)
        );
    }
    Ok(())
}

//! Compute pipelines compiled on a thread of their own (src/gpu/graphics.rs,
//! `ComputePipeline::compiling`; `ComputeKernel::compiling`): sets bind while the compile may
//! still run, the first dispatch waits for it and computes what a kernel compiled on the calling
//! thread computes, a kernel dropped before any use waits for its compile, and a failed compile
//! is an error naming the pipeline at its dispatch. Validation (synchronization included) is on.

mod common;

use common::{assert_no_validation_messages, gpu};
use scarp::gpu::{
    shaders, vk, Access, BindingKind, Buffer, BufferDesc, ComputeKernel, Gpu, GpuError, Recorder,
    Resource, Shader,
};
use scarp::render::shared::PagePush;
use std::sync::Arc;

/// The echo kernel's four words for `push`, dispatched through `kernel`.
fn echo(gpu: &Arc<Gpu>, kernel: &ComputeKernel<PagePush>, push: PagePush) -> Vec<u32> {
    let out = Buffer::new(
        gpu,
        "echo",
        BufferDesc::new(16)
            .usage(vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_SRC),
    )
    .unwrap();
    let readback = Buffer::new(gpu, "echo readback", BufferDesc::readback(16)).unwrap();
    let set = kernel.bind(&[Resource::StorageBuffer(&out)]).unwrap();
    let mut rec = Recorder::new(gpu).unwrap();
    rec.pass(kernel, &set)
        .write_buffer(&out)
        .push(&push)
        .dispatch([1, 1, 1])
        .unwrap();
    rec.copy_buffer(&out, 0, &readback, 0, 16);
    rec.buffer(&readback, Access::HostRead);
    rec.submit_and_wait().unwrap();
    bytemuck::pod_collect_to_vec(readback.mapped(16).unwrap())
}

#[test]
fn a_kernel_compiled_on_its_own_thread_dispatches_as_one_compiled_at_once() {
    let gpu = gpu();
    let shader = &shaders::TEST_ECHO_PAGE_PUSH_COMP;
    let kinds = [BindingKind::StorageBuffer];
    let at_once: ComputeKernel<PagePush> = ComputeKernel::new(&gpu, shader, &kinds, &[]).unwrap();
    let compiling: ComputeKernel<PagePush> =
        ComputeKernel::compiling(&gpu, shader, &kinds, &[]).unwrap();
    let push = PagePush {
        block_origin: [-7, 12],
        present: [3, 0xdead_beef],
    };
    let words = echo(&gpu, &compiling, push);
    assert_eq!(words, echo(&gpu, &at_once, push));
    assert_eq!(words, [-7i32 as u32, 12, 3, 0xdead_beef]);
    // Dropped before any use: its drop waits for the compile, then destroys what it made.
    let unused: ComputeKernel<PagePush> =
        ComputeKernel::compiling(&gpu, shader, &kinds, &[]).unwrap();
    drop(unused);
    assert_no_validation_messages(&gpu);
}

#[test]
fn a_compile_that_fails_on_its_own_thread_is_an_error_naming_the_pipeline() {
    let gpu = gpu();
    // Three bytes are no SPIR-V: the compile's thread fails before any Vulkan call.
    let bad = Shader {
        name: "test/not_spirv.comp",
        spirv: &[1, 2, 3],
    };
    let kernel: ComputeKernel<PagePush> =
        ComputeKernel::compiling(&gpu, &bad, &[BindingKind::StorageBuffer], &[]).unwrap();
    let out = Buffer::new(
        &gpu,
        "out",
        BufferDesc::new(16).usage(vk::BufferUsageFlags::STORAGE_BUFFER),
    )
    .unwrap();
    let set = kernel.bind(&[Resource::StorageBuffer(&out)]).unwrap();
    let mut rec = Recorder::new(&gpu).unwrap();
    let err = rec
        .pass(&kernel, &set)
        .write_buffer(&out)
        .push(&PagePush::default())
        .dispatch([1, 1, 1])
        .unwrap_err();
    assert!(
        matches!(&err, GpuError::Pipeline { name, .. } if name == "test/not_spirv.comp[]"),
        "{err}"
    );
    drop(rec);
    drop(set);
    drop(kernel);
    assert_no_validation_messages(&gpu);
}

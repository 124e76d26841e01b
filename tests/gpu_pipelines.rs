//! Compute pipelines compiled on a thread of their own (src/gpu/graphics.rs,
//! `ComputePipeline::compiling`; `ComputeKernel::compiling`): sets bind before the compile ends,
//! the first dispatch waits for it and computes what a kernel compiled on the calling thread
//! computes, and a kernel dropped before any use waits for its compile. Validation
//! (synchronization included) is on.

mod common;

use common::{assert_no_validation_messages, gpu};
use scarp::gpu::{
    shaders, vk, Access, BindingKind, Buffer, BufferDesc, ComputeKernel, Gpu, Recorder, Resource,
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

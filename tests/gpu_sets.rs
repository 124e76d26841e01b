//! Descriptor sets in reused pools (src/gpu/pipeline.rs, DescriptorSet): a dropped set's pool is
//! reset and taken by the next set of the same sizes only once no submission can still use it,
//! and a set made in a reused pool binds what it was given. Validation (synchronization
//! included) is on.

mod common;

use common::{assert_no_validation_messages, gpu};
use scarp::gpu::{
    shaders, vk, Access, BindingKind, Buffer, BufferDesc, ComputeKernel, DescriptorSet, Gpu,
    Recorder, Resource,
};
use scarp::render::shared::PagePush;
use std::sync::Arc;

fn storage(gpu: &Arc<Gpu>, name: &str) -> Buffer {
    Buffer::new(
        gpu,
        name,
        BufferDesc::new(16)
            .usage(vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_SRC),
    )
    .unwrap()
}

/// Records the echo kernel writing `push`'s four words through `set` into `out`, read back into
/// `readback`.
fn record<'a>(
    rec: &mut Recorder<'a>,
    kernel: &'a ComputeKernel<PagePush>,
    set: &'a DescriptorSet,
    out: &'a Buffer,
    readback: &'a Buffer,
    push: PagePush,
) {
    rec.pass(kernel, set)
        .write_buffer(out)
        .push(&push)
        .dispatch([1, 1, 1])
        .unwrap();
    rec.copy_buffer(out, 0, readback, 0, 16);
    rec.buffer(readback, Access::HostRead);
}

fn words(b: &Buffer) -> Vec<u32> {
    bytemuck::pod_collect_to_vec(b.mapped(16).unwrap())
}

fn push(salt: i32) -> PagePush {
    PagePush {
        block_origin: [salt, salt + 1],
        present: [salt as u32 + 2, salt as u32 + 3],
    }
}

#[test]
fn a_dropped_sets_pool_is_reused_once_no_submission_can_use_it() {
    let gpu = gpu();
    let kernel: ComputeKernel<PagePush> = ComputeKernel::new(
        &gpu,
        &shaders::TEST_ECHO_PAGE_PUSH_COMP,
        &[BindingKind::StorageBuffer],
        &[],
    )
    .unwrap();
    let (a, b) = (storage(&gpu, "a"), storage(&gpu, "b"));
    let readback = |name| Buffer::new(&gpu, name, BufferDesc::readback(16)).unwrap();
    let (ra, rb) = (readback("a readback"), readback("b readback"));
    let spare = gpu.spare_descriptor_pools();

    // A set used by a detached submission: its pool is not reused while that may run.
    let set = kernel.bind(&[Resource::StorageBuffer(&a)]).unwrap();
    let mut rec = Recorder::new(&gpu).unwrap();
    record(&mut rec, &kernel, &set, &a, &ra, push(10));
    // SAFETY: nothing the recording uses is written by the host, and `ra` is read only after
    // the ticket has finished.
    let ticket = unsafe { rec.submit_detached(None, None) }.unwrap();
    drop(set);
    if !gpu.finished(ticket).unwrap() {
        assert_eq!(
            gpu.spare_descriptor_pools(),
            spare,
            "a pool was kept for reuse while its set's submission may still run"
        );
    }
    gpu.wait_for(ticket).unwrap();
    assert_eq!(gpu.spare_descriptor_pools(), spare + 1);
    assert_eq!(words(&ra), vec![10, 11, 12, 13]);

    // The next set of the same sizes takes that pool, and binds its own buffer.
    let set = kernel.bind(&[Resource::StorageBuffer(&b)]).unwrap();
    assert_eq!(gpu.spare_descriptor_pools(), spare);
    let mut rec = Recorder::new(&gpu).unwrap();
    record(&mut rec, &kernel, &set, &b, &rb, push(20));
    rec.submit_and_wait().unwrap();
    assert_eq!(words(&rb), vec![20, 21, 22, 23]);
    assert_eq!(
        words(&ra),
        vec![10, 11, 12, 13],
        "the reused set wrote the old buffer"
    );
    drop(set);
    assert_eq!(gpu.spare_descriptor_pools(), spare + 1);
    assert_no_validation_messages(&gpu);
}

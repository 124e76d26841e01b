//! Every struct that crosses the CPU/GPU line has the same field offsets in Rust and in GLSL.
//! Each echo kernel (shaders-glsl/test/echo_*.comp) writes every field of one struct in GLSL
//! declaration order as raw words; the test fills the Rust struct with distinct words, so a field
//! that sits elsewhere in GLSL (or a field missing on one side) shows up as a word out of place.
//! Push-constant structs go in as push constants, FrameData as a std140 block, TileDraw as std430,
//! as the real kernels read them. Validation (synchronization included) is on.

mod common;

use bytemuck::Pod;
use common::{assert_no_validation_messages, gpu};
use scarp::brush::shared::{BrushInstance, BrushPass, SmoothPass};
use scarp::gpu::{
    shaders, vk, Access, BindingKind, Buffer, BufferDesc, ComputeKernel, Gpu, MemoryLocation,
    Recorder, Resource, Shader,
};
use scarp::noise::shared::NoiseGenPush;
use scarp::render::shared::{BoundsPush, FrameData, MipsPush, PagePush, ShadePush, TileDraw};
use std::sync::Arc;

/// A value of `T` whose 32-bit word k is distinct from every other (a normal float, so no
/// driver may flush it).
fn distinct<T: Pod>(salt: u32) -> T {
    let mut v: T = bytemuck::Zeroable::zeroed();
    let words: &mut [u32] = bytemuck::cast_slice_mut(std::slice::from_mut(&mut v));
    for (k, w) in words.iter_mut().enumerate() {
        *w = 0x3F80_0000 + salt * 0x10_0000 + k as u32 * 0x1357;
    }
    v
}

fn words_of<T: Pod>(v: &T) -> Vec<u32> {
    bytemuck::cast_slice(std::slice::from_ref(v)).to_vec()
}

fn storage(gpu: &Arc<Gpu>, name: &str, bytes: u64) -> Buffer {
    Buffer::new(
        gpu,
        name,
        BufferDesc::new(bytes)
            .usage(vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_SRC),
    )
    .unwrap()
}

/// A host-written storage buffer holding `v`.
fn input<T: Pod>(gpu: &Arc<Gpu>, name: &str, v: &T) -> Buffer {
    let bytes = std::mem::size_of::<T>() as u64;
    let mut b = Buffer::new(
        gpu,
        name,
        BufferDesc::new(bytes)
            .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
            .location(MemoryLocation::CpuToGpu),
    )
    .unwrap();
    b.write(std::slice::from_ref(v)).unwrap();
    b
}

/// Runs an echo kernel (output at binding 0, `inputs` at the next bindings, `push` as push
/// constants) and returns the `words` it wrote.
fn echo<P: Pod>(
    gpu: &Arc<Gpu>,
    shader: &Shader,
    push: &P,
    inputs: &[&Buffer],
    words: usize,
) -> Vec<u32> {
    let bindings = vec![BindingKind::StorageBuffer; 1 + inputs.len()];
    let kernel: ComputeKernel<P> = ComputeKernel::new(gpu, shader, &bindings, &[]).unwrap();
    let bytes = words as u64 * 4;
    let out = storage(gpu, "echo", bytes);
    let readback = Buffer::new(gpu, "echo readback", BufferDesc::readback(bytes)).unwrap();
    let mut resources = vec![Resource::StorageBuffer(&out)];
    resources.extend(inputs.iter().map(|b| Resource::StorageBuffer(b)));
    let set = kernel.bind(&resources).unwrap();
    let mut rec = Recorder::new(gpu).unwrap();
    for b in inputs {
        rec.buffer(b, Access::HostWrite);
    }
    let mut pass = rec.pass(&kernel, &set).write_buffer(&out);
    for b in inputs {
        pass = pass.read_buffer(b);
    }
    pass.push(push).dispatch([1, 1, 1]).unwrap();
    rec.copy_buffer(&out, 0, &readback, 0, bytes);
    rec.buffer(&readback, Access::HostRead);
    rec.submit_and_wait().unwrap();
    bytemuck::pod_collect_to_vec(readback.mapped(words * 4).unwrap())
}

/// Checks one push-constant struct against its echo kernel.
fn check_push<P: Pod>(shader: &Shader, name: &str) {
    let gpu = gpu();
    let value: P = distinct(1);
    let expected = words_of(&value);
    let echoed = echo(&gpu, shader, &value, &[], expected.len());
    assert_eq!(
        echoed, expected,
        "a field of {name} sits at a different offset in GLSL"
    );
    assert_no_validation_messages(&gpu);
}

#[test]
fn noise_gen_push_layout_matches_glsl() {
    check_push::<NoiseGenPush>(&shaders::TEST_ECHO_NOISE_COMP, "NoiseGenPush");
}

#[test]
fn brush_pass_layout_matches_glsl() {
    check_push::<BrushPass>(&shaders::TEST_ECHO_BRUSH_PASS_COMP, "BrushPass");
}

/// SmoothPass as push constants, then a BrushInstance as the std430 buffer the brush kernels
/// read their instances from.
#[test]
fn smooth_pass_and_instance_layout_match_glsl() {
    let gpu = gpu();
    let pass: SmoothPass = distinct(1);
    let instance: BrushInstance = distinct(2);
    let buf = input(&gpu, "instance", &instance);
    let mut expected = words_of(&pass);
    expected.extend(words_of(&instance));
    let echoed = echo(
        &gpu,
        &shaders::TEST_ECHO_SMOOTH_PASS_COMP,
        &pass,
        &[&buf],
        expected.len(),
    );
    assert_eq!(
        echoed, expected,
        "a field of SmoothPass or BrushInstance sits at a different offset in GLSL"
    );
    assert_no_validation_messages(&gpu);
}

#[test]
fn page_push_layout_matches_glsl() {
    check_push::<PagePush>(&shaders::TEST_ECHO_PAGE_PUSH_COMP, "PagePush");
}

#[test]
fn shade_push_layout_matches_glsl() {
    check_push::<ShadePush>(&shaders::TEST_ECHO_SHADE_PUSH_COMP, "ShadePush");
}

#[test]
fn mips_push_layout_matches_glsl() {
    check_push::<MipsPush>(&shaders::TEST_ECHO_MIPS_PUSH_COMP, "MipsPush");
}

#[test]
fn bounds_push_layout_matches_glsl() {
    check_push::<BoundsPush>(&shaders::TEST_ECHO_BOUNDS_PUSH_COMP, "BoundsPush");
}

#[test]
fn frame_data_and_tile_draw_layout_match_glsl() {
    let gpu = gpu();
    let frame: FrameData = distinct(2);
    let tile: TileDraw = distinct(3);
    let frame_buf = input(&gpu, "frame", &frame);
    let tile_buf = input(&gpu, "tile", &tile);
    let mut expected = words_of(&frame);
    expected.extend(words_of(&tile));
    let echoed = echo(
        &gpu,
        &shaders::TEST_ECHO_FRAME_COMP,
        &0u32,
        &[&frame_buf, &tile_buf],
        expected.len(),
    );
    let (f, t) = echoed.split_at(words_of(&frame).len());
    assert_eq!(
        f,
        &expected[..f.len()],
        "a field of FrameData sits elsewhere in GLSL"
    );
    assert_eq!(
        t,
        &expected[f.len()..],
        "a field of TileDraw sits elsewhere in GLSL"
    );
    assert_no_validation_messages(&gpu);
}

#[test]
fn layer_push_layouts_match_glsl() {
    use scarp::layers::shared::{BlendPush, FoldPush, RulesPush};
    check_push::<FoldPush>(&shaders::TEST_ECHO_FOLD_PUSH_COMP, "FoldPush");
    check_push::<BlendPush>(&shaders::TEST_ECHO_BLEND_PUSH_COMP, "BlendPush");
    check_push::<RulesPush>(&shaders::TEST_ECHO_RULES_PUSH_COMP, "RulesPush");
}

#[test]
fn erosion_push_layout_matches_glsl() {
    use scarp::erosion::shared::ErosionPush;
    check_push::<ErosionPush>(&shaders::TEST_ECHO_EROSION_PUSH_COMP, "ErosionPush");
}

#[test]
fn lighting_push_layout_matches_glsl() {
    use scarp::render::lighting::LightPush;
    check_push::<LightPush>(&shaders::TEST_ECHO_LIGHT_PUSH_COMP, "LightPush");
}

/// PathPush and one PathSegment, as echo_path_push.comp declares its push constants.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PathEcho {
    push: scarp::brush::shared::PathPush,
    segment: scarp::brush::shared::PathSegment,
}

#[test]
fn path_push_and_segment_layouts_match_glsl() {
    check_push::<PathEcho>(&shaders::TEST_ECHO_PATH_PUSH_COMP, "PathPush/PathSegment");
}

#[test]
fn geology_push_layout_matches_glsl() {
    use scarp::geology::shared::GeologyPush;
    check_push::<GeologyPush>(&shaders::TEST_ECHO_GEOLOGY_PUSH_COMP, "GeologyPush");
}

#[test]
fn maps_push_layout_matches_glsl() {
    use scarp::maps::MapsPush;
    check_push::<MapsPush>(&shaders::TEST_ECHO_MAPS_PUSH_COMP, "MapsPush");
}

#[test]
fn surface_page_push_layout_matches_glsl() {
    use scarp::maps::SurfacePagePush;
    check_push::<SurfacePagePush>(
        &shaders::TEST_ECHO_SURFACE_PAGE_PUSH_COMP,
        "SurfacePagePush",
    );
}

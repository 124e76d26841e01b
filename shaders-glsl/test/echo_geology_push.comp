#version 460
// Layout oracle for GeologyPush (src/geology/shared.rs), see echo.glsl.
#extension GL_GOOGLE_include_directive : require

#define GEOLOGY_NO_KERNEL
#include "geology_shared.glsl"
#include "echo.glsl"

layout(local_size_x = 1) in;

layout(push_constant) uniform Push { GeologyPush p; } pc;

void main() {
    putI2(pc.p.size); putF(pc.p.tau); putF(pc.p.diag); putF(pc.p.tau2); putF(pc.p.a0);
    putF(pc.p.erodibility); putF(pc.p.m); putF(pc.p.n); putF(pc.p.diffusion); putF(pc.p.dt);
    putF(pc.p.uplift); putF(pc.p.base_level); putI(pc.p.has_base); putI(pc.p.measure);
    putF(pc.p.steady_unit); putI(pc.p.uniform_uplift); putF(pc.p.inv_tau);
    putF(pc.p.inv_diag); putI(pc.p.multi_flow); putF(pc.p.flow_exponent);
    putI(pc.p.critical); putF(pc.p.rise_axis); putF(pc.p.rise_diag);
    putI(pc.p.stationary); putF(pc.p.relaxation);
}

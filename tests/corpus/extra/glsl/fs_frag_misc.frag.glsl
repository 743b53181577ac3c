#version 460
// Fragment-only system values and operations: conditional discard inside a loop, sample id /
// position / mask, interpolateAtSample/Centroid/Offset, fine and coarse derivatives, fwidth,
// helper invocations, front facing, point coord, sample mask and depth outputs.
layout(location = 0) in vec4 vA;
layout(location = 1) centroid in vec4 vB;
layout(location = 2) sample in vec4 vC;
layout(location = 3) noperspective in vec4 vD;
layout(location = 4) flat in int vN;
layout(location = 0) out vec4 o0;

void main()
{
    vec4 acc = vA + vB + vC + vD;
    for (int i = 0; i < vN; i++) {
        acc += vA * float(i);
        if (acc.w > 100.0)
            discard;
    }
    acc += interpolateAtSample(vA, gl_SampleID) + interpolateAtCentroid(vD) + interpolateAtOffset(vA, vec2(0.25, -0.125));
    acc.xy += gl_SamplePosition + gl_PointCoord;
    acc += dFdxFine(vA) + dFdyFine(vB) + dFdxCoarse(vC) + dFdyCoarse(vD) + fwidth(vA) + fwidthFine(vB) + fwidthCoarse(vC);
    acc.z += float(gl_SampleMaskIn[0]) + (gl_HelperInvocation ? 1.0 : 0.0) + (gl_FrontFacing ? 2.0 : 0.0);
    acc.w += gl_FragCoord.z + gl_FragCoord.w;
    gl_SampleMask[0] = int(acc.x) & 5;
    gl_FragDepth = clamp(acc.y, 0.0, 1.0);
    o0 = acc;
}

#version 460
// textureGather on every gatherable dimension, with constant, dynamic and four-texel offsets,
// depth-compare gathers with offsets, integer gathers.
layout(location = 0) in vec4 vUV;
layout(location = 1) flat in ivec2 vOff;
layout(binding = 0) uniform sampler2D s2;
layout(binding = 1) uniform sampler2DArray s2a;
layout(binding = 2) uniform samplerCube sc;
layout(binding = 3) uniform samplerCubeArray sca;
layout(binding = 4) uniform sampler2DShadow s2s;
layout(binding = 5) uniform sampler2DArrayShadow s2as;
layout(binding = 6) uniform samplerCubeShadow scs;
layout(binding = 7) uniform isampler2D si2;
layout(location = 0) out vec4 o0;
layout(location = 1) out ivec4 o1;
const ivec2 offs[4] = ivec2[4](ivec2(-1, -1), ivec2(2, 0), ivec2(0, 3), ivec2(-4, 5));

void main()
{
    vec4 a = textureGather(s2, vUV.xy, 3) + textureGather(s2a, vUV.xyz, 1) + textureGather(sc, vUV.xyz, 2)
           + textureGather(sca, vUV, 0);
    a += textureGatherOffset(s2, vUV.xy, vOff) + textureGatherOffset(s2a, vUV.xyz, ivec2(1, -2), 2)
       + textureGatherOffsets(s2, vUV.xy, offs, 1) + textureGatherOffset(s2, vUV.xy, vOff + 1, 3);
    a += textureGather(s2s, vUV.xy, 0.5) + textureGather(s2as, vUV.xyz, vUV.w) + textureGather(scs, vUV.xyz, 0.25)
       + textureGatherOffset(s2s, vUV.xy, vUV.z, ivec2(-3, 2)) + textureGatherOffsets(s2s, vUV.zw, 0.75, offs);
    ivec4 i = textureGather(si2, vUV.xy, 1) + textureGatherOffset(si2, vUV.zw, ivec2(1, 1), 2);
    o0 = a;
    o1 = i;
}

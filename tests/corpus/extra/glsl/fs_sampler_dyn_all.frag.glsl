#version 460
// Sampler arrays indexed with a run-time value: every sampling function goes through a bindless
// handle held in a register (TEX.B / TLD.B / TLD4.B / TXD.B / TMML.B / TXQ.B).
layout(location = 0) in vec4 vUV;
layout(location = 1) flat in int vIdx;
layout(binding = 0) uniform sampler2D t2[4];
layout(binding = 4) uniform sampler3D t3[2];
layout(binding = 6) uniform sampler2DShadow ts[2];
layout(binding = 8) uniform samplerCube tc[2];
layout(location = 0) out vec4 o0;

void main()
{
    int i = vIdx & 3;
    int j = vIdx & 1;
    vec4 a = texture(t2[i], vUV.xy) + textureLod(t2[i], vUV.zw, vUV.x) + texture(t2[i], vUV.xy, 1.5)
           + textureGrad(t2[i], vUV.xy, vUV.zw, vUV.wz) + textureOffset(t2[i], vUV.xy, ivec2(1, -1))
           + texelFetch(t2[i], ivec2(vUV.xy), 2) + textureGather(t2[i], vUV.xy, 2)
           + textureGatherOffset(t2[i], vUV.zw, ivec2(-2, 3)) + texture(t3[j], vUV.xyz)
           + textureLod(t3[j], vUV.xyz, 2.0) + texelFetch(t3[j], ivec3(vUV.xyz), 0) + texture(tc[j], vUV.xyz)
           + textureGrad(tc[j], vUV.xyz, vUV.xyz, vUV.zyx);
    float d = texture(ts[j], vUV.xyz) + textureLod(ts[j], vUV.xyz, 0.0) + textureGather(ts[j], vUV.xy, vUV.z).x;
    vec2 q = textureQueryLod(t2[i], vUV.xy) + textureQueryLod(t3[j], vUV.xyz);
    ivec2 sz = textureSize(t2[i], 0) + textureSize(t3[j], 1).xy + textureSize(ts[j], 0) + ivec2(textureQueryLevels(t2[i]));
    o0 = a + vec4(d, q, float(sz.x + sz.y));
}

#version 460
// Fragment inputs indexed with a run-time value (interpolation through an indexed attribute
// address), shadow lookups with bias / explicit lod / offsets on 2D, 2D-array and cube samplers.
layout(location = 0) in vec4 vArr[4];
layout(location = 4) flat in int vSel;
layout(location = 5) in vec4 vUV;
layout(binding = 0) uniform sampler2DShadow s2s;
layout(binding = 1) uniform samplerCubeShadow scs;
layout(binding = 2) uniform sampler2DArrayShadow s2as;
layout(location = 0) out vec4 o0;

void main()
{
    vec4 v = vArr[vSel & 3] + vArr[(vSel + 1) & 3];
    float d = texture(s2s, vUV.xyz, 1.5) + texture(scs, vUV, 0.5) + textureLod(s2s, vUV.xyz, 2.0)
            + textureOffset(s2s, vUV.xyz, ivec2(1, 2), 0.25) + textureLodOffset(s2s, vUV.zyx, 0.0, ivec2(-1, 3))
            + texture(s2as, vUV) + textureOffset(s2as, vUV, ivec2(2, -2)) + textureGradOffset(s2s, vUV.xyz, vUV.xy, vUV.yx, ivec2(3, 3));
    o0 = v * d;
}

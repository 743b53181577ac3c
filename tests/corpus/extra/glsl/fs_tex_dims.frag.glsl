#version 460
// Every sampler dimension and sampling function: 1D/1DArray/3D/Cube/CubeArray/2DMS/2DMSArray,
// shadow samplers (1D, 2DArray, Cube, CubeArray), integer samplers, lod/grad/offset/proj/fetch,
// textureQueryLod (TMML), textureQueryLevels, textureSize, textureSamples.
layout(location = 0) in vec4 vUV;
layout(location = 1) flat in ivec4 vI;
layout(binding = 0) uniform sampler1D s1;
layout(binding = 1) uniform sampler1DArray s1a;
layout(binding = 2) uniform sampler3D s3;
layout(binding = 3) uniform samplerCube sc;
layout(binding = 4) uniform samplerCubeArray sca;
layout(binding = 5) uniform sampler2DMS sms;
layout(binding = 6) uniform sampler2DMSArray smsa;
layout(binding = 7) uniform sampler1DShadow s1s;
layout(binding = 8) uniform sampler2DArrayShadow s2as;
layout(binding = 9) uniform samplerCubeShadow scs;
layout(binding = 10) uniform samplerCubeArrayShadow scas;
layout(binding = 11) uniform isampler2D si2;
layout(binding = 12) uniform usampler3D su3;
layout(binding = 13) uniform sampler2D s2;
layout(location = 0) out vec4 o0;
layout(location = 1) out ivec4 o1;

void main()
{
    vec4 a = texture(s1, vUV.x) + texture(s1a, vUV.xy) + texture(s3, vUV.xyz) + texture(sc, vUV.xyz)
           + texture(sca, vUV);
    a += textureLod(s1, vUV.x, 1.5) + textureLod(s3, vUV.xyz, vUV.w) + textureLod(sc, vUV.xyz, 2.0)
       + textureLod(sca, vUV, 0.0) + textureLod(s1a, vUV.xy, vUV.z);
    a += textureGrad(s3, vUV.xyz, vUV.yzx, vUV.zxy) + textureGrad(sc, vUV.xyz, vUV.xyz, vUV.yzx)
       + textureGrad(s1, vUV.x, vUV.y, vUV.z);
    a += textureOffset(s1, vUV.x, 2) + textureOffset(s3, vUV.xyz, ivec3(1, -1, 2))
       + textureLodOffset(s3, vUV.xyz, 1.0, ivec3(-2, 0, 1)) + textureGradOffset(s2, vUV.xy, vUV.zw, vUV.wz, ivec2(3, -3))
       + textureOffset(s2, vUV.xy, ivec2(-8, 7), 0.5) + textureProj(s2, vUV.xyz) + textureProjLod(s3, vUV, 1.0);
    a += texelFetch(s1, vI.x, 0) + texelFetch(s3, vI.xyz, vI.w) + texelFetch(sms, vI.xy, 2)
       + texelFetch(smsa, vI.xyz, vI.w) + texelFetch(s1a, vI.xy, 1) + texelFetchOffset(s2, vI.xy, 0, ivec2(1, 2));
    float d = texture(s1s, vUV.xyz) + texture(s2as, vUV) + texture(scs, vUV) + texture(scas, vUV, 0.25)
            + textureLod(s1s, vUV.xyz, 1.0) + textureOffset(s1s, vUV.xyz, 3) + textureGrad(s2as, vUV, vUV.xy, vUV.yx);
    ivec4 i = texture(si2, vUV.xy) + textureLod(si2, vUV.zw, 3.0) + texelFetch(si2, vI.zw, 1);
    uvec4 u = texture(su3, vUV.xyz) + texelFetch(su3, vI.xyz, 0);
    vec2 q = textureQueryLod(s2, vUV.xy) + textureQueryLod(s3, vUV.xyz).yx + textureQueryLod(sc, vUV.xyz);
    int lv = textureQueryLevels(s2) + textureQueryLevels(sc) + textureQueryLevels(sca);
    ivec3 sz = textureSize(s3, 1) + ivec3(textureSize(s1, 0), textureSize(sms).x, textureSize(sca, 0).z)
             + textureSize(smsa) + ivec3(textureSize(scs, 0), 1);
    int ns = textureSamples(sms) + textureSamples(smsa);
    o0 = a + vec4(d, q, float(lv));
    o1 = i + ivec4(u) + ivec4(sz, ns);
}

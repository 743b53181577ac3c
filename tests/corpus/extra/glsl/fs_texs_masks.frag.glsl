#version 460
// Texture results used through every component subset, so the compiler trims the write mask:
// TEXS / TLDS / TEX / TLD write masks and TEXS component selections (R, G, RG, RA, RGB, ...).
layout(location = 0) in vec4 vUV;
layout(location = 1) flat in ivec4 vI;
layout(binding = 0) uniform sampler2D s2;
layout(binding = 1) uniform sampler3D s3;
layout(binding = 2) uniform sampler2DArray s2a;
layout(location = 0) out vec4 o0;

void main()
{
    vec4 acc = vec4(0.0);
    float k;
    acc += vec4(texture(s2, vUV.xy + 0.01).x);
    acc += vec4(texelFetch(s2, vI.xy + 1, 0).x);
    acc += vec4(textureLod(s3, vUV.xyz + 0.01, 1.0).x);
    acc += vec4(texture(s2a, vec3(vUV.zw + 0.01, 1.0)).x);
    acc += vec4(texture(s2, vUV.xy + 0.02).y);
    acc += vec4(texelFetch(s2, vI.xy + 2, 0).y);
    acc += vec4(textureLod(s3, vUV.xyz + 0.02, 1.0).y);
    acc += vec4(texture(s2a, vec3(vUV.zw + 0.02, 1.0)).y);
    acc += vec4(texture(s2, vUV.xy + 0.03).z);
    acc += vec4(texelFetch(s2, vI.xy + 3, 0).z);
    acc += vec4(textureLod(s3, vUV.xyz + 0.03, 1.0).z);
    acc += vec4(texture(s2a, vec3(vUV.zw + 0.03, 1.0)).z);
    acc += vec4(texture(s2, vUV.xy + 0.04).w);
    acc += vec4(texelFetch(s2, vI.xy + 4, 0).w);
    acc += vec4(textureLod(s3, vUV.xyz + 0.04, 1.0).w);
    acc += vec4(texture(s2a, vec3(vUV.zw + 0.04, 1.0)).w);
    acc += vec4(texture(s2, vUV.xy + 0.05).xy, 0.0, 0.0);
    acc += vec4(texelFetch(s2, vI.xy + 5, 0).xy, 0.0, 0.0);
    acc += vec4(textureLod(s3, vUV.xyz + 0.05, 1.0).xy, 0.0, 0.0);
    acc += vec4(texture(s2a, vec3(vUV.zw + 0.05, 1.0)).xy, 0.0, 0.0);
    acc += vec4(texture(s2, vUV.xy + 0.06).xz, 0.0, 0.0);
    acc += vec4(texelFetch(s2, vI.xy + 6, 0).xz, 0.0, 0.0);
    acc += vec4(textureLod(s3, vUV.xyz + 0.06, 1.0).xz, 0.0, 0.0);
    acc += vec4(texture(s2a, vec3(vUV.zw + 0.06, 1.0)).xz, 0.0, 0.0);
    acc += vec4(texture(s2, vUV.xy + 0.07).xw, 0.0, 0.0);
    acc += vec4(texelFetch(s2, vI.xy + 7, 0).xw, 0.0, 0.0);
    acc += vec4(textureLod(s3, vUV.xyz + 0.07, 1.0).xw, 0.0, 0.0);
    acc += vec4(texture(s2a, vec3(vUV.zw + 0.07, 1.0)).xw, 0.0, 0.0);
    acc += vec4(texture(s2, vUV.xy + 0.08).yz, 0.0, 0.0);
    acc += vec4(texelFetch(s2, vI.xy + 8, 0).yz, 0.0, 0.0);
    acc += vec4(textureLod(s3, vUV.xyz + 0.08, 1.0).yz, 0.0, 0.0);
    acc += vec4(texture(s2a, vec3(vUV.zw + 0.08, 1.0)).yz, 0.0, 0.0);
    acc += vec4(texture(s2, vUV.xy + 0.09).yw, 0.0, 0.0);
    acc += vec4(texelFetch(s2, vI.xy + 9, 0).yw, 0.0, 0.0);
    acc += vec4(textureLod(s3, vUV.xyz + 0.09, 1.0).yw, 0.0, 0.0);
    acc += vec4(texture(s2a, vec3(vUV.zw + 0.09, 1.0)).yw, 0.0, 0.0);
    acc += vec4(texture(s2, vUV.xy + 0.10).zw, 0.0, 0.0);
    acc += vec4(texelFetch(s2, vI.xy + 10, 0).zw, 0.0, 0.0);
    acc += vec4(textureLod(s3, vUV.xyz + 0.10, 1.0).zw, 0.0, 0.0);
    acc += vec4(texture(s2a, vec3(vUV.zw + 0.10, 1.0)).zw, 0.0, 0.0);
    acc += vec4(texture(s2, vUV.xy + 0.11).xyz, 0.0);
    acc += vec4(texelFetch(s2, vI.xy + 11, 0).xyz, 0.0);
    acc += vec4(textureLod(s3, vUV.xyz + 0.11, 1.0).xyz, 0.0);
    acc += vec4(texture(s2a, vec3(vUV.zw + 0.11, 1.0)).xyz, 0.0);
    acc += vec4(texture(s2, vUV.xy + 0.12).xyw, 0.0);
    acc += vec4(texelFetch(s2, vI.xy + 12, 0).xyw, 0.0);
    acc += vec4(textureLod(s3, vUV.xyz + 0.12, 1.0).xyw, 0.0);
    acc += vec4(texture(s2a, vec3(vUV.zw + 0.12, 1.0)).xyw, 0.0);
    acc += vec4(texture(s2, vUV.xy + 0.13).xzw, 0.0);
    acc += vec4(texelFetch(s2, vI.xy + 13, 0).xzw, 0.0);
    acc += vec4(textureLod(s3, vUV.xyz + 0.13, 1.0).xzw, 0.0);
    acc += vec4(texture(s2a, vec3(vUV.zw + 0.13, 1.0)).xzw, 0.0);
    acc += vec4(texture(s2, vUV.xy + 0.14).yzw, 0.0);
    acc += vec4(texelFetch(s2, vI.xy + 14, 0).yzw, 0.0);
    acc += vec4(textureLod(s3, vUV.xyz + 0.14, 1.0).yzw, 0.0);
    acc += vec4(texture(s2a, vec3(vUV.zw + 0.14, 1.0)).yzw, 0.0);
    acc += texture(s2, vUV.xy + 0.15).xyzw;
    acc += texelFetch(s2, vI.xy + 15, 0).xyzw;
    acc += textureLod(s3, vUV.xyz + 0.15, 1.0).xyzw;
    acc += texture(s2a, vec3(vUV.zw + 0.15, 1.0)).xyzw;
    o0 = acc;
}

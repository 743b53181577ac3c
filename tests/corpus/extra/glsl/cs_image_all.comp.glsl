#version 460
// Images of every dimension (1D, 2D, 2DArray, 3D, Cube, CubeArray, Buffer), formatted and
// unformatted loads/stores, every image atomic (also on a dynamically indexed image array: bindless
// handle in a register), imageSize, imageSamples.
layout(local_size_x = 64) in;
layout(binding = 0, r32ui) uniform uimage1D i1;
layout(binding = 1, r32i) uniform iimage2D i2;
layout(binding = 2, rgba16f) uniform image2DArray i2a;
layout(binding = 3, r32f) uniform image3D i3;
layout(binding = 4, rgba32f) uniform imageCube ic;
layout(binding = 5, r32ui) uniform uimageBuffer ib;
layout(binding = 6, r32ui) uniform uimage2D ua[2];
layout(binding = 0, std430) buffer Out { uint o[]; };

void main()
{
    uint t = gl_GlobalInvocationID.x;
    int x = int(t);
    uint v = imageLoad(i1, x).x;
    vec4 f = imageLoad(i2a, ivec3(x, 2, 3)) + imageLoad(i3, ivec3(x, 1, 2)).xxxx
           + imageLoad(ic, ivec3(x, x, 4));
    imageStore(i2a, ivec3(x, 1, 1), f * 2.0);
    imageStore(i3, ivec3(x, 0, 1), f.yyyy);
    imageStore(ic, ivec3(1, x, 5), f.wzyx);
    imageStore(ib, x, uvec4(v));
    v += imageAtomicAdd(i1, x, 1u);
    v += imageAtomicMin(i1, x + 1, v);
    v += imageAtomicMax(i1, x + 2, v);
    v += imageAtomicAnd(i1, x + 3, v);
    v += imageAtomicOr(i1, x + 4, v);
    v += imageAtomicXor(i1, x + 5, v);
    v += imageAtomicExchange(i1, x + 6, v);
    v += imageAtomicCompSwap(i1, x + 7, v, 7u);
    int s = imageAtomicMin(i2, ivec2(x, 1), int(v)) + imageAtomicMax(i2, ivec2(x, 2), -int(v))
          + imageAtomicAdd(i2, ivec2(x, 3), 5);
    v += imageAtomicAdd(ib, x, 3u);
    uint k = t & 1u;
    v += imageAtomicAdd(ua[k], ivec2(x, 0), 2u) + imageAtomicCompSwap(ua[k], ivec2(x, 1), 3u, v)
       + imageLoad(ua[k], ivec2(x, 2)).x;
    imageStore(ua[k], ivec2(x, 3), uvec4(v));
    ivec2 sz = imageSize(i2) + imageSize(ic) + ivec2(imageSize(i1), imageSize(ib))
             + imageSize(i3).xy + imageSize(i2a).yz + imageSize(ua[k]);
    o[t] = v + uint(s) + uint(sz.x + sz.y);
}

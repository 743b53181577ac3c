#version 460
// Integer/float built-ins that map to less common Maxwell forms: extended multiplies, carries and
// borrows, bitfield ops with dynamic operands, findLSB/findMSB, bitCount, packing/unpacking,
// frexp/ldexp, fma, isnan/isinf, f64 built-ins, int64 arithmetic, shuffles and votes.
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_ARB_shader_ballot : require
#extension GL_ARB_shader_group_vote : require
layout(local_size_x = 64) in;
layout(binding = 0, std430) buffer Buf { uvec4 inp[]; };
layout(binding = 1, std430) buffer Out { uvec4 outp[]; };
layout(binding = 2, std430) buffer Dbl { dvec2 dd[]; };
layout(binding = 0, std140) uniform U { uvec4 uu; vec4 uf; };

void main()
{
    uint t = gl_GlobalInvocationID.x;
    uvec4 a = inp[t];
    uint hi, lo, c, b;
    umulExtended(a.x, a.y, hi, lo);
    int ihi, ilo;
    imulExtended(int(a.z), int(uu.x), ihi, ilo);
    uint s = uaddCarry(a.x, a.w, c);
    uint d = usubBorrow(a.y, uu.y, b);
    uint e = bitfieldExtract(a.x, int(a.y & 31u), int(uu.z & 15u));
    int ie = bitfieldExtract(int(a.z), 3, int(a.w & 7u));
    uint f = bitfieldInsert(a.y, a.z, int(uu.w & 31u), 5);
    uint g = bitfieldReverse(a.w) + uint(findLSB(a.x)) + uint(findMSB(int(a.y))) + uint(findMSB(a.z)) + uint(bitCount(a.w));
    vec4 fv = uintBitsToFloat(a);
    uint p = packHalf2x16(fv.xy) + packUnorm4x8(fv) + packSnorm2x16(fv.zw) + packUnorm2x16(fv.xz) + packSnorm4x8(fv.wzyx);
    vec4 up = unpackUnorm4x8(a.x) + unpackSnorm4x8(a.y) + vec4(unpackHalf2x16(a.z), unpackSnorm2x16(a.w));
    int ex;
    float m = frexp(fv.x, ex);
    float l = ldexp(fv.y, int(a.z & 7u));
    float fm = fma(fv.z, uf.x, fv.w) + roundEven(fv.x) + trunc(fv.y) + fract(fv.z) + sign(fv.w) + step(uf.y, fv.x);
    bool nn = isnan(fv.x) || isinf(fv.y);
    dvec2 dv = dd[t];
    double dr = fma(dv.x, dv.y, double(uf.z)) + floor(dv.x) + ceil(dv.y) + trunc(dv.x) + fract(dv.y)
              + sqrt(abs(dv.x)) + min(dv.x, dv.y) + max(dv.x, double(uf.w)) + roundEven(dv.y);
    dd[t] = dvec2(dr, double(isnan(dv.x) ? 1 : 0));
    uint64_t w = packUint2x32(a.xy) * packUint2x32(a.zw) + (uint64_t(a.x) << (a.y & 63u)) + (uint64_t(a.z) >> 7);
    int64_t sw = int64_t(int(a.w)) * int64_t(ilo) >> 3;
    uint64_t bal = ballotARB(a.x > a.y);
    bool all = allInvocationsARB(a.z != 0u);
    bool eq = allInvocationsEqualARB(a.w != 0u);
    uint rd = readInvocationARB(a.x, 5u) + readFirstInvocationARB(a.y);
    uvec2 w2 = unpackUint2x32(w + uint64_t(sw) + bal);
    outp[t] = uvec4(hi + lo + uint(ihi) + c + b + s + d + e + uint(ie) + f + g + p + rd + (all ? 1u : 0u) + (eq ? 2u : 0u),
                    floatBitsToUint(m + l + fm + up.x + up.y + up.z + up.w) + uint(ex) + (nn ? 4u : 0u), w2);
}

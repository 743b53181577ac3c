#version 460
// Every shared-memory and SSBO atomic (add/min/max signed and unsigned, and/or/xor, exchange,
// compare-swap) with used and unused results, memory barriers of every scope, group barriers.
layout(local_size_x = 128) in;
layout(binding = 0, std430) buffer B { uint bu[64]; int bi[64]; uint res[]; };
shared uint su[128];
shared int si[128];

void main()
{
    uint t = gl_LocalInvocationIndex;
    su[t] = t;
    si[t] = -int(t);
    barrier();
    uint k = (t * 7u) & 127u;
    uint r = atomicAdd(su[k], 1u) + atomicMin(su[k ^ 1u], t) + atomicMax(su[k ^ 2u], t) + atomicAnd(su[k ^ 3u], 0xffu)
           + atomicOr(su[k ^ 4u], 0x100u) + atomicXor(su[k ^ 5u], t) + atomicExchange(su[k ^ 6u], t)
           + atomicCompSwap(su[k ^ 7u], t, 5u);
    int s = atomicAdd(si[k], -1) + atomicMin(si[k ^ 1u], int(t) - 64) + atomicMax(si[k ^ 2u], -int(t));
    atomicAdd(su[0], 1u);
    atomicMax(si[1], int(t));
    memoryBarrierShared();
    groupMemoryBarrier();
    barrier();
    uint g = t & 63u;
    r += atomicAdd(bu[g], t) + atomicMin(bu[g], t) + atomicMax(bu[g], 3u) + atomicAnd(bu[g], ~t) + atomicOr(bu[g], t)
       + atomicXor(bu[g], 9u) + atomicExchange(bu[g], r) + atomicCompSwap(bu[g], 1u, 2u);
    s += atomicAdd(bi[g], -3) + atomicMin(bi[g], s) + atomicMax(bi[g], -s) + atomicExchange(bi[g], 4)
       + atomicCompSwap(bi[g], 1, -1);
    atomicMin(bi[(g + 1u) & 63u], s);
    atomicMax(bu[(g + 2u) & 63u], r);
    atomicAnd(bu[(g + 3u) & 63u], r);
    atomicOr(bu[(g + 4u) & 63u], r);
    atomicXor(bu[(g + 5u) & 63u], r);
    memoryBarrierBuffer();
    memoryBarrier();
    memoryBarrierImage();
    res[gl_GlobalInvocationID.x] = r + uint(s) + su[(t + 1u) & 127u] + uint(si[(t + 3u) & 127u]);
}

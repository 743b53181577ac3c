#version 460
// A geometry shader that emits no vertex and only stores to memory: every input triangle x
// invocation writes a record of its inputs, gl_PrimitiveIDIn and gl_InvocationID to its own
// slot and counts itself atomically.
layout(triangles, invocations = 2) in;
layout(points, max_vertices = 1) out;

layout(location = 0) in vec3 vWorldPos[];
layout(std430, binding = 0) buffer Out { uint count; uint pad[3]; uvec4 slots[]; };

void main()
{
    uint slot = uint(gl_PrimitiveIDIn) * 2u + uint(gl_InvocationID);
    vec3 s = vWorldPos[0] + vWorldPos[1] * 2.0 + vWorldPos[2] * 3.0;
    vec4 p = gl_in[0].gl_Position - gl_in[2].gl_Position;
    slots[2u * slot] = uvec4(floatBitsToUint(s), slot + 1u);
    slots[2u * slot + 1u] = uvec4(floatBitsToUint(p.xyz), uint(gl_PrimitiveIDIn) + 100u);
    atomicAdd(count, 1u);
}

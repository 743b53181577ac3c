#version 460
// Vertex shader that indexes its input and output arrays with run-time values (attribute address
// computed in a register: AL2P / ALD / AST with register offsets), plus clip/cull distances
// written in a loop and a local array.
layout(location = 0) in vec4 aPos;
layout(location = 1) in vec4 aArr[6];
layout(location = 7) in ivec4 aIdx;
layout(location = 0) out vec4 vOut[5];
out float gl_ClipDistance[4];
out float gl_CullDistance[2];

void main()
{
    vec4 acc = vec4(0.0);
    for (int i = 0; i < aIdx.x; i++)
        acc += aArr[(i + aIdx.y) % 6];
    for (int j = 0; j < 5; j++)
        vOut[j] = vec4(0.0);
    vOut[aIdx.z & 3] = acc;
    vOut[4] = aArr[aIdx.w % 6] * aPos;
    for (int k = 0; k < 4; k++)
        gl_ClipDistance[k] = dot(aPos, aArr[k]);
    gl_CullDistance[aIdx.x & 1] = acc.x;
    gl_CullDistance[(aIdx.x + 1) & 1] = acc.y;
    gl_Position = aPos + acc;
}

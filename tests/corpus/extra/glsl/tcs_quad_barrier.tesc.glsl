#version 460
// Tessellation control for quads: per-vertex outputs read back after barrier(), patch outputs,
// outer and inner tessellation levels computed from neighbours.
layout(vertices = 4) out;
layout(location = 0) in vec4 vIn[];
layout(location = 0) out vec4 tOut[];
layout(location = 1) patch out vec4 pOut;

void main()
{
    tOut[gl_InvocationID] = vIn[gl_InvocationID] * 2.0;
    gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position;
    barrier();
    vec4 n = tOut[(gl_InvocationID + 1) % 4];
    if (gl_InvocationID == 0) {
        gl_TessLevelOuter[0] = n.x;
        gl_TessLevelOuter[1] = n.y;
        gl_TessLevelOuter[2] = n.z;
        gl_TessLevelOuter[3] = n.w;
        gl_TessLevelInner[0] = tOut[2].x;
        gl_TessLevelInner[1] = tOut[3].y;
        pOut = n + vec4(float(gl_PatchVerticesIn), float(gl_PrimitiveID), 0.0, 0.0);
    }
}

#version 460
// Geometry shader with invocations, primitive id, layer/viewport output, several strips ended by
// EndPrimitive in a loop (OUT.CUT / EMIT_THEN_CUT), a conditional emit.
layout(triangles, invocations = 2) in;
layout(triangle_strip, max_vertices = 9) out;
layout(location = 0) in vec4 vIn[];
layout(location = 0) out vec4 gOut;

void main()
{
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < 3; i++) {
            gl_Position = gl_in[i].gl_Position + vec4(float(k), 0.0, 0.0, 0.0);
            gOut = vIn[i] * float(gl_InvocationID + 1) + float(gl_PrimitiveIDIn);
            gl_Layer = k;
            gl_ViewportIndex = gl_InvocationID;
            if (vIn[i].w > 0.0)
                EmitVertex();
        }
        EndPrimitive();
    }
}

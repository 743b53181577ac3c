#version 460
// Geometry shader writing to two vertex streams (EmitStreamVertex / EndStreamPrimitive).
#extension GL_ARB_gpu_shader5 : enable
layout(points) in;
layout(points, max_vertices = 4) out;
layout(location = 0) in vec4 vIn[];
layout(location = 0, stream = 0) out vec4 gA;
layout(location = 1, stream = 1) out vec4 gB;

void main()
{
    gl_Position = gl_in[0].gl_Position;
    gA = vIn[0];
    EmitStreamVertex(0);
    gB = vIn[0] * 2.0;
    EmitStreamVertex(1);
    EndStreamPrimitive(0);
    gB = vIn[0] * 3.0;
    EmitStreamVertex(1);
    EndStreamPrimitive(1);
}

#version 460
// Geometry shader indexing its per-vertex inputs with a run-time vertex number and component.
layout(triangles) in;
layout(points, max_vertices = 3) out;
layout(location = 0) in vec4 vIn[][3];
layout(location = 3) flat in int vSel[];
layout(location = 0) out vec4 gOut;

void main()
{
    for (int i = 0; i < 3; i++) {
        int s = vSel[i] % 3;
        gl_Position = gl_in[(i + vSel[0]) % 3].gl_Position;
        gOut = vIn[i][s] + vIn[s][i];
        gl_PointSize = float(s);
        EmitVertex();
    }
}

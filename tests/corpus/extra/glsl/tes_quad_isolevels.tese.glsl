#version 460
// Tessellation evaluation for quads (fractional odd spacing, cw): bilinear interpolation, reads the
// tessellation levels and a patch input.
layout(quads, fractional_odd_spacing, cw) in;
layout(location = 0) in vec4 tIn[];
layout(location = 1) patch in vec4 pIn;
layout(location = 0) out vec4 eOut;

void main()
{
    vec2 uv = gl_TessCoord.xy;
    vec4 a = mix(gl_in[0].gl_Position, gl_in[1].gl_Position, uv.x);
    vec4 b = mix(gl_in[3].gl_Position, gl_in[2].gl_Position, uv.x);
    gl_Position = mix(a, b, uv.y);
    eOut = mix(tIn[0], tIn[2], uv.y) + pIn * (gl_TessLevelOuter[0] + gl_TessLevelInner[1]) + float(gl_PrimitiveID);
}

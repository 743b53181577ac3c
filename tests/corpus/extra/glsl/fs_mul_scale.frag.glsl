#version 460
// Products scaled by powers of two, which the nouveau backend in uam folds into FMUL's post-scale
// field (FMUL .D2 .D4 .D8 .M2 .M4 .M8), with register, uniform (c[][]) and immediate operands;
// pow() (FMUL.FMZ between MUFU.LG2 and MUFU.EX2).
layout(location = 0) in vec4 a;
layout(location = 1) in vec4 b;
layout(binding = 0, std140) uniform U { vec4 u; };
layout(location = 0) out vec4 o;
layout(location = 1) out vec4 o2;
layout(location = 2) out vec4 o3;

void main()
{
    o = vec4((a.x * b.x) * 0.5, (a.y * b.y) * 4.0, (a.z * b.z) * 0.25, (a.w * b.w) * 8.0);
    o2 = vec4((a.x * b.y) * 2.0, (a.y * b.z) * 0.125, pow(a.z, b.w), (a.w * b.x) * 16.0);
    o3 = vec4((a.x * u.x) * 0.5, (a.y * u.y) * 8.0, (a.z * 3.0) * 0.25, pow(u.z, a.w));
}

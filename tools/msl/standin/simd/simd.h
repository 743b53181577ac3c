// dmsh stand-in: <simd/simd.h> adds nothing the MSL needs beyond <metal_stdlib>.
#pragma once
#include <metal_stdlib>

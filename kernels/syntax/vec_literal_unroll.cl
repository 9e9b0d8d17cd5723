// Constructs real kernels use that the front end used to reject:
// a vector literal `(float4)(a, b, c, d)` (clang's CompoundLiteralExpr) and
// loops with unroll hints (`#pragma unroll`, `#pragma unroll 2`,
// `__attribute__((opencl_unroll_hint))`). A 4-tap window summed per output.
// @run --global 1024 --local 64 --arg out=zeros:1024 --arg in=rand:1027:1 --arg n=1024
// @run --global 256 --local 32 --arg out=zeros:256 --arg in=rand:259:2 --arg n=256
// @expect splittable
// @float
__kernel void vec_literal_unroll(__global float4 *out, __global const float *in, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float s = 0.0f;
    #pragma unroll
    for (int j = 0; j < 4; j++)
        s += in[i + j];
    float t = 0.0f;
    #pragma unroll 2
    for (int j = 0; j < 2; j++)
        t += in[i + 2 * j];
    float u = 0.0f;
    __attribute__((opencl_unroll_hint(2)))
    for (int j = 1; j < 3; j++)
        u += in[i + j];
    out[i] = (float4)(s, t, u, in[i]);
}

// Float buffers updated in place through inline casts to wider
// vector types, the way vectorized SDK kernels write them: work-item i
// adds twice float4 i of x to float4 i of y (a read-modify-write through
// `((__global float4 *)y)[i]`), then lowers the second lane of float2
// 2i + 1 through a local float2 view. The run-time guard checks each
// access in floats (a float4 covers four, a float2 two) and the device
// buffers start at a multiple of four floats, so the views stay whole.
// @run --global 256 --local 32 --arg y=rand:1024:1 --arg x=rand:1024:2 --arg n4=250
// @run --global 96 --local 16 --arg y=rand:400:3 --arg x=rand:400:4 --arg n4=90
// @expect splittable
// @float
__kernel void view_inline_rw(__global float *y, __global const float *x, int n4)
{
    int i = get_global_id(0);
    if (i < n4) {
        ((__global float4 *)y)[i] += ((__global const float4 *)x)[i] * 2.0f;
        __global float2 *y2 = (__global float2 *)y;
        y2[2 * i + 1].y -= 1.0f;
    }
}

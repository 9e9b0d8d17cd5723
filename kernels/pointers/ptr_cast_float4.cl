// Buffers of floats read and written as float4 through pointers
// cast to `__global float4 *` (the SDK idiom for vectorized kernels on
// scalar buffers): work-item i touches floats 4*i .. 4*i + 3. The casts
// were refused ("pointer cast from 'float *' to 'float4 *' is not
// supported"). The analysis splits it with its exact footprint, and the
// run-time guard checks each float4 of the views `x4` and `y4` as the
// four floats it covers (a view of wider elements: the device buffers
// start at a multiple of four floats).
// @run --global 256 --local 64 --arg x=rand:1024:1 --arg y=zeros:1024 --arg a=0.5 --arg n4=256
// @run --global 96 --local 32 --arg x=rand:360:2 --arg y=zeros:360 --arg a=2 --arg n4=90
// @expect splittable
// @float
__kernel void ptr_cast_float4(__global const float *x, __global float *y, float a, int n4)
{
    int i = get_global_id(0);
    __global const float4 *x4 = (__global const float4 *)x;
    __global float4 *y4 = (__global float4 *)y;
    if (i < n4)
        y4[i] = x4[i] * a + (float4)(1.0f, 2.0f, 3.0f, 4.0f);
}

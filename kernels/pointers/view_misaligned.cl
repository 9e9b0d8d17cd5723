// One buffer read both as floats and as float4s: work-item i
// reads float4 i and, for i > 0, the float just before it, so a slice's
// footprint starts one float before a float4. The launcher starts such a
// device buffer at a multiple of four floats (the subkernel's `aligned`),
// so the float4 view still addresses whole float4s; otherwise the guard
// would refuse every access through the view and the launch would run
// unsplit.
// @run --global 256 --local 32 --arg y=zeros:256 --arg x=rand:1024:2 --arg n4=256
// @run --global 72 --local 8 --arg y=zeros:72 --arg x=rand:300:5 --arg n4=70
// @expect splittable
// @float
__kernel void view_misaligned(__global float *y, __global const float *x, int n4)
{
    int i = get_global_id(0);
    __global const float4 *x4 = (__global const float4 *)x;
    if (i < n4) {
        float s = i > 0 ? x[4 * i - 1] : 0.0f;
        y[i] = x4[i].x + x4[i].w + s;
    }
}

// Vector components written inside macro arguments (`MIN(v.x, v.y)`), as
// image-free filters write them, and a variable declared from two
// components (`float2 hi = v.zw`): each component is the lane it names
// (libclang gives every token of a macro argument the macro's place; the
// component is read where the argument wrote it).
// @run --global 256 --local 32 --arg in=rand:1024:1 --arg out=zeros:256 --arg n=250
// @run --global 96 --local 16 --arg in=rand:384:2 --arg out=rand:96:3 --arg n=96
// @expect splittable
#define MIN(a, b) ((a) <= (b) ? (a) : (b))
#define MAX(a, b) ((a) >= (b) ? (a) : (b))

__kernel void swizzle_macro_argument(__global const float4 *in, __global float *out, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float4 v = in[i];
    float2 hi = v.zw;
    out[i] = MIN(v.x, MIN(v.y, hi.x)) + MAX(hi.y, in[i].w);
}

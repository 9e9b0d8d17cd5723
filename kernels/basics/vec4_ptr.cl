// float4 pointer arguments (element counts are in float4 units), with a
// scalar-vector multiply and a swizzle: c[i] = a[i] * scale + b[i].wzyx.
// @run --global 256 --local 32 --arg a=rand:256:1 --arg b=rand:256:2 --arg c=zeros:256 --arg scale=2
// @run --global 250 --local 10 --arg a=rand:250:3 --arg b=rand:250:4 --arg c=zeros:250 --arg scale=0.5
// @expect splittable
// @float
__kernel void vec4_ptr(__global const float4 *a, __global const float4 *b,
                       __global float4 *c, float scale)
{
    int i = get_global_id(0);
    float4 v = a[i] * scale + b[i].wzyx;
    c[i] = v;
}

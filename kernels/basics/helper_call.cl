// Kernel calling two non-kernel helper functions: one takes scalars, the other
// takes a __global pointer and reads p[i] and p[i + 1] itself, so the access
// is only visible after inlining the helper.
// @run --global 1024 --local 64 --arg a=rand:1024:1 --arg b=rand:1025:2 --arg out=zeros:1024 --arg w=0.25
// @run --global 1000 --local 8 --arg a=rand:1000:3 --arg b=rand:1001:4 --arg out=zeros:1000 --arg w=0.8
// @expect splittable
// @float
float blend(float x, float y, float w)
{
    return x * (1.0f - w) + y * w;
}

float pair_avg(__global const float *p, int i)
{
    return 0.5f * (p[i] + p[i + 1]);
}

__kernel void helper_call(__global const float *a, __global const float *b,
                          __global float *out, float w)
{
    int i = get_global_id(0);
    out[i] = blend(a[i], pair_avg(b, i), w);
}

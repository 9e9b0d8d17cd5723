// Strided writes: out[2*i] = a[i], out[2*i + 1] = b[i] (two interleaved
// streams). Each slice writes a contiguous block of out through two strided
// write accesses.
// @run --global 1024 --local 64 --arg a=rand:1024:1 --arg b=rand:1024:2 --arg out=zeros:2048
// @run --global 1000 --local 8 --arg a=rand:1000:3 --arg b=rand:1000:4 --arg out=zeros:2000
// @expect splittable
__kernel void interleave(__global const float *a, __global const float *b,
                         __global float *out)
{
    int i = get_global_id(0);
    out[2 * i] = a[i];
    out[2 * i + 1] = b[i];
}

// Strided reads: b[i] = a[2*i + 1] - a[2*i]. Each slice reads a contiguous
// block of a twice as long as its block of b.
// @run --global 1024 --local 64 --arg a=rand:2048:1 --arg b=zeros:1024
// @run --global 1000 --local 8 --arg a=rand:2000:2 --arg b=zeros:1000
// @expect splittable
__kernel void strided(__global const float *a, __global float *b)
{
    int i = get_global_id(0);
    b[i] = a[2 * i + 1] - a[2 * i];
}

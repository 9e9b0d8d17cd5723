// Indirect read (gather): b[i] = a[idx[i]]. The subscript of a is data
// dependent, so a is transferred whole; idx and b still split.
// @run --global 1024 --local 64 --arg a=rand:1024:1 --arg idx=rand:1024:2 --arg b=zeros:1024
// @run --global 1000 --local 8 --arg a=rand:1000:3 --arg idx=rand:1000:4 --arg b=zeros:1000
// @expect splittable whole=a
__kernel void gather(__global const float *a, __global const int *idx,
                     __global float *b)
{
    int i = get_global_id(0);
    b[i] = a[idx[i]];
}

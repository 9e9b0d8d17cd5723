// A read-write array, a[i] = a[i] * s + b[i] (both elements of a
// read and written by the same work-item), with a guard bound n below the
// global size.
// @run --global 1024 --local 64 --arg a=rand:1024:1 --arg b=rand:1024:2 --arg s=3 --arg n=1024
// @run --global 1000 --local 8 --arg a=rand:997:3 --arg b=rand:997:4 --arg s=-0.5 --arg n=997
// @expect splittable
// @float
__kernel void read_write_array(__global float *a, __global const float *b,
                               float s, int n)
{
    int i = get_global_id(0);
    if (i < n)
        a[i] = a[i] * s + b[i];
}

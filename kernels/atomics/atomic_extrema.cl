// Per-bucket extrema with global atomics: atomic_min on a signed int array
// (values centred on zero, so some are negative) and atomic_max on a uint
// array (the same values converted, so the negative ones are the largest).
// The results are unused: each device updates whole copies, which merge as
// the least (greatest) of the copies, compared as the element type.
// @run --global 1024 --local 64 --arg data=rand:1024:1 --arg lo=rand:16:2 --arg hi=zeros:16 --arg nbuckets=16 --arg n=1024
// @run --global 1000 --local 8 --arg data=rand:999:3 --arg lo=zeros:9 --arg hi=rand:9:4 --arg nbuckets=9 --arg n=999
// @expect splittable whole=lo,hi
__kernel void atomic_extrema(__global const int *data, __global int *lo,
                             __global uint *hi, int nbuckets, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        int v = data[i] - n / 2;
        int b = i % nbuckets;
        atomic_min(&lo[b], v);
        atomic_max(&hi[b], (uint)v);
    }
}

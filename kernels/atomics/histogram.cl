// Histogram with global atomics: atomic_inc(&bins[data[i] % nbins]). The bin
// subscript is data dependent and the atomic writes of all work-groups may hit
// the same bin, but the kernel only counts into bins and never uses the
// atomic's result: each device counts into a whole copy of bins and the
// copies merge as a sum of their changes.
// @run --global 1024 --local 64 --arg data=rand:1024:1 --arg bins=zeros:16 --arg nbins=16 --arg n=1024
// @run --global 1000 --local 8 --arg data=rand:990:2 --arg bins=rand:10:3 --arg nbins=10 --arg n=990
// @expect splittable whole=bins
__kernel void histogram(__global const uint *data, __global uint *bins,
                        uint nbins, int n)
{
    int i = get_global_id(0);
    if (i < n)
        atomic_inc(&bins[data[i] % nbins]);
}

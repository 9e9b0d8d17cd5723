// Histogram with global atomics: atomic_inc(&bins[data[i] % nbins]). The bin
// subscript is data dependent and the atomic writes of all work-groups may hit
// the same bin, so the kernel is not split.
// @run --global 1024 --local 64 --arg data=rand:1024:1 --arg bins=zeros:16 --arg nbins=16 --arg n=1024
// @run --global 1000 --local 8 --arg data=rand:990:2 --arg bins=zeros:10 --arg nbins=10 --arg n=990
// @expect not-splittable whole=bins
__kernel void histogram(__global const uint *data, __global uint *bins,
                        uint nbins, int n)
{
    int i = get_global_id(0);
    if (i < n)
        atomic_inc(&bins[data[i] % nbins]);
}

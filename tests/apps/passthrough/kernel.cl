/* Kernels the layer never splits (global atomics: every work-item may
   write every bin), for ../passthrough/main.c. */
__kernel void histogram(__global const uint *data, __global uint *bins, uint nbins, int n,
                        int shift)
{
    int i = get_global_id(0);
    if (i < n)
        atomic_inc(&bins[(data[i] >> shift) % nbins]);
}

/* bins[b] = bins[b] / 2, one work-item per bin; work-item 0 counts the
   launches (a global atomic again). */
__kernel void halve(__global uint *bins, __global uint *calls, uint nbins)
{
    int b = get_global_id(0);
    if (b == 0)
        atomic_inc(calls);
    if (b < nbins)
        bins[b] = bins[b] / 2;
}

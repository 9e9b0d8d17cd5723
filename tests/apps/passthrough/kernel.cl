/* Kernels the layer never splits, for ../passthrough/main.c: their global
   atomics use the values they return (a compare-and-swap loop, a counter
   whose old value is kept), so the devices' copies cannot be merged. */
__kernel void histogram(__global const uint *data, __global uint *bins, uint nbins, int n,
                        int shift)
{
    int i = get_global_id(0);
    if (i < n) {
        __global uint *bin = &bins[(data[i] >> shift) % nbins];
        uint seen = *bin, old;
        do {
            old = seen;
            seen = atomic_cmpxchg(bin, old, old + 1);
        } while (seen != old);
    }
}

/* bins[b] = bins[b] / 2, one work-item per bin; work-item 0 counts the
   launches and keeps the count before this one in calls[1] (a global
   atomic whose value is used). */
__kernel void halve(__global uint *bins, __global uint *calls, uint nbins)
{
    int b = get_global_id(0);
    if (b == 0)
        calls[1] = atomic_inc(&calls[0]);
    if (b < nbins)
        bins[b] = bins[b] / 2;
}

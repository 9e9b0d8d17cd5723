/* Counts values into bins with global atomics: every work-item may write
   every bin, so the kernel cannot be split. */
__kernel void histogram(__global const uint *data, __global uint *bins, uint nbins, int n,
                        int shift)
{
    int i = get_global_id(0);
    if (i < n)
        atomic_inc(&bins[(data[i] >> shift) % nbins]);
}

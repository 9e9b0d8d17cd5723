/* Counts values into bins with global atomics: every work-item may write
   every bin, and no atomic's value is used, so each device counts into a
   whole copy of the bins and the copies merge as a sum. */
__kernel void histogram(__global const uint *data, __global uint *bins, uint nbins, int n,
                        int shift)
{
    int i = get_global_id(0);
    if (i < n)
        atomic_inc(&bins[(data[i] >> shift) % nbins]);
}

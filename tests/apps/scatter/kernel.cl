/* A ring of m slots filled from n values through an index array (the
   identity): ring_same writes each slot from the table at that slot, so
   every writer of a slot writes one value (merged when split);
   ring_overwrite writes the slot from in[i], so work-items i and i + m
   write different values (a conflict: run unsplit). */
__kernel void ring_same(__global const int *idx, __global const float *table,
                        __global float *ring, int m, int n)
{
    int i = get_global_id(0);
    if (i < n)
        ring[idx[i] % m] = table[idx[i] % m];
}

__kernel void ring_overwrite(__global const float *in, __global const int *idx,
                             __global float *ring, int m, int n)
{
    int i = get_global_id(0);
    if (i < n)
        ring[idx[i] % m] = in[i];
}

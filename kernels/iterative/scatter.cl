// Scatters over resident buffers: rescale updates a array in place,
// scatter_same writes each ring slot out[idx[i] % m] from w at the same
// slot (every writer of a slot writes one value: the devices' copies
// merge), scatter_overwrite writes the slot from in[i], so work-items i
// and i + m write different values (the run-time check finds the
// conflict; the launch runs unsplit, restoring what only a device held).
__kernel void rescale(__global float *a, int n)
{
    int i = get_global_id(0);
    if (i < n)
        a[i] = a[i] * 0.5f + 1.0f;
}

__kernel void scatter_same(__global const int *idx, __global float *out,
                           __global const float *w, int m)
{
    int i = get_global_id(0);
    out[idx[i] % m] = w[idx[i] % m];
}

__kernel void scatter_overwrite(__global const float *in, __global const int *idx,
                                __global float *out, int m)
{
    int i = get_global_id(0);
    out[idx[i] % m] = in[i];
}

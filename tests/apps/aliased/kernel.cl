/* y = a*x + y, elementwise: the host passes one buffer as both x and y,
   and another as x with a sub-range of the same buffer as y. */
__kernel void axpy(__global const float *x, __global float *y, float a, int n)
{
    int i = get_global_id(0);
    if (i < n)
        y[i] = a * x[i] + y[i];
}

/* out = the sum of two neighbours of in: launched with in and out the
   same buffer's two halves (sub-buffers). */
__kernel void pair_sum(__global const float *in, __global float *out, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = in[i] + in[(i + 1) % n];
}

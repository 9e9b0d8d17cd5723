/* One step of a 1-D Jacobi relaxation in two kernels: the three-point
   average of a into b, then b copied back into a (interior points only). */
__kernel void jacobi1d_average(__global const float *a, __global float *b, int n)
{
    int i = get_global_id(0);
    if (i > 0 && i < n - 1)
        b[i] = 0.33333f * (a[i - 1] + a[i] + a[i + 1]);
}

__kernel void jacobi1d_copy(__global float *a, __global const float *b, int n)
{
    int i = get_global_id(0);
    if (i > 0 && i < n - 1)
        a[i] = b[i];
}

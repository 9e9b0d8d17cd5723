/* Step k of an LU decomposition in place (no pivoting) on an n x n matrix;
   the NDRange covers the whole matrix, work-items outside step k's rows and
   columns do nothing. */
__kernel void lu_scale(__global float *a, int k, int n)
{
    int j = get_global_id(0);
    if (j > k && j < n)
        a[k * n + j] = a[k * n + j] / a[k * n + k];
}

__kernel void lu_update(__global float *a, int k, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i > k && j > k && i < n && j < n)
        a[i * n + j] = a[i * n + j] - a[i * n + k] * a[k * n + j];
}

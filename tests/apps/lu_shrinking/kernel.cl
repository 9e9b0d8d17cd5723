/* Step k of an LU decomposition in place (no pivoting) on an n x n matrix.
   The NDRange covers only what step k changes: row k right of the pivot,
   then the trailing (n-k-1) x (n-k-1) block; it shrinks with k. */
__kernel void lu_div(__global float *a, int k, int n)
{
    int j = get_global_id(0) + (k + 1);
    if (j < n)
        a[k * n + j] = a[k * n + j] / a[k * n + k];
}

__kernel void lu_elim(__global float *a, int k, int n)
{
    int j = get_global_id(0) + (k + 1);
    int i = get_global_id(1) + (k + 1);
    if (i < n && j < n)
        a[i * n + j] = a[i * n + j] - a[i * n + k] * a[k * n + j];
}

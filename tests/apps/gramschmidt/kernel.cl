/* Modified Gram-Schmidt QR of an m x n matrix a (row-major), one column k
   at a time: the norm of column k, column k of q, then row k of r and the
   columns right of k updated (the NDRange covers those columns only). */
__kernel void gs_norm(__global const float *a, __global float *r, int m, int n, int k)
{
    if (get_global_id(0) == 0) {
        float nrm = 0.0f;
        for (int i = 0; i < m; i++)
            nrm += a[i * n + k] * a[i * n + k];
        r[k * n + k] = sqrt(nrm);
    }
}

__kernel void gs_normalize(__global const float *a, __global const float *r, __global float *q,
                           int m, int n, int k)
{
    int i = get_global_id(0);
    if (i < m)
        q[i * n + k] = a[i * n + k] / r[k * n + k];
}

__kernel void gs_update(__global float *a, __global float *r, __global const float *q,
                        int m, int n, int k)
{
    int j = get_global_id(0) + (k + 1);
    if (j < n) {
        float s = 0.0f;
        for (int i = 0; i < m; i++)
            s += q[i * n + k] * a[i * n + j];
        r[k * n + j] = s;
        for (int i = 0; i < m; i++)
            a[i * n + j] = a[i * n + j] - q[i * n + k] * s;
    }
}

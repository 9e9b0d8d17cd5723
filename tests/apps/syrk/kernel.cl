/* Symmetric rank-k update: c = alpha * a * a^T + beta * c, a n x m,
   c n x n (both triangles), row-major. */
__kernel void syrk(__global const float *a, __global float *c, float alpha, float beta, int n, int m)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i < n && j < n) {
        float acc = c[i * n + j] * beta;
        for (int k = 0; k < m; k++)
            acc += alpha * a[i * m + k] * a[j * m + k];
        c[i * n + j] = acc;
    }
}

/* C = alpha * A * B + beta * C, A ni x nk, B nk x nj, C ni x nj, row-major. */
__kernel void gemm(__global const float *a, __global const float *b, __global float *c,
                   float alpha, float beta, int ni, int nj, int nk)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i < ni && j < nj) {
        float acc = c[i * nj + j] * beta;
        for (int k = 0; k < nk; k++)
            acc += alpha * a[i * nk + k] * b[k * nj + j];
        c[i * nj + j] = acc;
    }
}

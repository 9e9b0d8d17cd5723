/* c = a * b, a ni x nk, b nk x nj, row-major. */
__kernel void mm(__global const float *a, __global const float *b, __global float *c,
                 int ni, int nj, int nk)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i < ni && j < nj) {
        float acc = 0.0f;
        for (int k = 0; k < nk; k++)
            acc += a[i * nk + k] * b[k * nj + j];
        c[i * nj + j] = acc;
    }
}

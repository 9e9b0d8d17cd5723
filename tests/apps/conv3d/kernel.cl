/* One plane i of a 3-D convolution (a 27-point stencil with fixed weights)
   over an ni x nj x nk grid: the NDRange covers the plane (k, j); points on
   the boundary are left as they are. */
__kernel void conv3d(__global const float *a, __global float *b, int ni, int nj, int nk, int i)
{
    int k = get_global_id(0);
    int j = get_global_id(1);
    if (i > 0 && i < ni - 1 && j > 0 && j < nj - 1 && k > 0 && k < nk - 1) {
        float s = 0.0f;
        for (int di = -1; di <= 1; di++)
            for (int dj = -1; dj <= 1; dj++)
                for (int dk = -1; dk <= 1; dk++) {
                    float w = 0.1f * (float)(di + 2) + 0.01f * (float)(dj + 2) + 0.001f * (float)(dk + 2);
                    s += w * a[(i + di) * nj * nk + (j + dj) * nk + (k + dk)];
                }
        b[i * nj * nk + j * nk + k] = s;
    }
}

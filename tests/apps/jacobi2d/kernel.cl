/* One Jacobi step on an n x n grid: the interior of `out` from `in`. */
__kernel void jacobi2d(__global const float *in, __global float *out, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i >= 1 && i < n - 1 && j >= 1 && j < n - 1)
        out[i * n + j] = 0.2f * (in[i * n + j] + in[i * n + j - 1] + in[i * n + j + 1]
                                 + in[(i - 1) * n + j] + in[(i + 1) * n + j]);
}

/* A 2-D five-point smoothing of a rows x cols grid (row-major), the border
   copied as it is, and a scaling of a grid in place. */
__kernel void smooth(__global const float *in, __global float *out, int rows, int cols)
{
    int c = get_global_id(0);
    int r = get_global_id(1);
    if (r >= rows || c >= cols)
        return;
    if (r == 0 || c == 0 || r == rows - 1 || c == cols - 1) {
        out[r * cols + c] = in[r * cols + c];
        return;
    }
    out[r * cols + c] = 0.2f * (in[r * cols + c] + in[(r - 1) * cols + c] + in[(r + 1) * cols + c]
                                + in[r * cols + c - 1] + in[r * cols + c + 1]);
}

__kernel void scale(__global float *g, float s, int rows, int cols)
{
    int c = get_global_id(0);
    int r = get_global_id(1);
    if (r < rows && c < cols)
        g[r * cols + c] = s * g[r * cols + c] + 1.0f;
}

// 2-D Jacobi, 5-point, one time step on an n x n grid stored row-major with
// the run-time width n: every interior point of `dst` becomes the average
// of the same point of `src` and its four neighbours; the border of `dst`
// is not written (fixed boundary). The host ping-pongs two grids, A -> B
// then B -> A, for T steps (`jacobi2d.ron`). The NDRange is (columns, rows)
// and may be rounded up past n.
__kernel void jacobi2d(__global const float *src, __global float *dst, int n)
{
    int col = get_global_id(0);
    int row = get_global_id(1);
    if (row >= 1 && row < n - 1 && col >= 1 && col < n - 1) {
        int at = row * n + col;
        dst[at] = 0.2f * (src[at] + src[at - 1] + src[at + 1]
                          + src[at - n] + src[at + n]);
    }
}

// LU decomposition without pivoting, in place, of an n x n matrix `a`
// stored row-major (run-time width n). Step k is two launches with the row
// scalar k passed each time:
//   lu_scale_col (1-D, one work-item per row): the column k below the
//                diagonal is divided by the pivot a[k][k] (the multipliers
//                of L);
//   lu_update    (2-D, columns x rows): the trailing submatrix below and
//                right of the pivot loses the outer product of column k and
//                row k.
// The NDRanges cover the whole matrix at every step (work-items outside
// step k's rows and columns do nothing); the host runs k = 0 .. n-2
// (`lu.ron`). Afterwards L (unit diagonal) is below the diagonal, U on and
// above it.
__kernel void lu_scale_col(__global float *a, int k, int n)
{
    int i = get_global_id(0);
    if (i > k && i < n)
        a[i * n + k] = a[i * n + k] / a[k * n + k];
}

__kernel void lu_update(__global float *a, int k, int n)
{
    int col = get_global_id(0);
    int row = get_global_id(1);
    if (row > k && row < n && col > k && col < n)
        a[row * n + col] = a[row * n + col] - a[row * n + k] * a[k * n + col];
}

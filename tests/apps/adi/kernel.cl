/* One time step of an alternating-direction implicit (ADI) solver on an
   n x n grid x with coefficients a and b: a forward sweep, a last-element
   scaling and a backward sweep along the rows (one work-item per row),
   then the same along the columns (one work-item per column). */
__kernel void adi_row_forward(__global const float *a, __global float *b, __global float *x, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        for (int j = 1; j < n; j++) {
            x[i * n + j] = x[i * n + j] - x[i * n + j - 1] * a[i * n + j] / b[i * n + j - 1];
            b[i * n + j] = b[i * n + j] - a[i * n + j] * a[i * n + j] / b[i * n + j - 1];
        }
    }
}

__kernel void adi_row_last(__global const float *b, __global float *x, int n)
{
    int i = get_global_id(0);
    if (i < n)
        x[i * n + n - 1] = x[i * n + n - 1] / b[i * n + n - 1];
}

__kernel void adi_row_backward(__global const float *a, __global const float *b, __global float *x, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        for (int j = n - 2; j >= 1; j--)
            x[i * n + j] = (x[i * n + j] - x[i * n + j - 1] * a[i * n + j - 1]) / b[i * n + j];
    }
}

__kernel void adi_col_forward(__global const float *a, __global float *b, __global float *x, int n)
{
    int j = get_global_id(0);
    if (j < n) {
        for (int i = 1; i < n; i++) {
            x[i * n + j] = x[i * n + j] - x[(i - 1) * n + j] * a[i * n + j] / b[(i - 1) * n + j];
            b[i * n + j] = b[i * n + j] - a[i * n + j] * a[i * n + j] / b[(i - 1) * n + j];
        }
    }
}

__kernel void adi_col_last(__global const float *b, __global float *x, int n)
{
    int j = get_global_id(0);
    if (j < n)
        x[(n - 1) * n + j] = x[(n - 1) * n + j] / b[(n - 1) * n + j];
}

__kernel void adi_col_backward(__global const float *a, __global const float *b, __global float *x, int n)
{
    int j = get_global_id(0);
    if (j < n) {
        for (int i = n - 2; i >= 1; i--)
            x[i * n + j] = (x[i * n + j] - x[(i - 1) * n + j] * a[(i - 1) * n + j]) / b[i * n + j];
    }
}

// Matrix-vector product y[row] = sum_j A[row*ncols + j] * x[j] (PolyBench atax
// kernel 1 / mvt style), one work-item per row, guarded by nrows.
// @run --global 256 --local 32 --arg A=rand:16384:1 --arg x=rand:64:2 --arg y=zeros:256 --arg nrows=256 --arg ncols=64
// @run --global 256 --local 16 --arg A=rand:9250:3 --arg x=rand:37:4 --arg y=zeros:250 --arg nrows=250 --arg ncols=37
// @expect splittable
// @float
__kernel void matvec(__global const float *A, __global const float *x,
                     __global float *y, int nrows, int ncols)
{
    int row = get_global_id(0);
    if (row < nrows) {
        float s = 0.0f;
        for (int j = 0; j < ncols; j++)
            s += A[row * ncols + j] * x[j];
        y[row] = s;
    }
}

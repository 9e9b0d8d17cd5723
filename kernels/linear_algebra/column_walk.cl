// Column walk. out[j] sums column j of an m x n row-major matrix,
// A[i*n + j] for i = 0 .. m-1: a slice of columns reads a band of columns of
// every row, whose box is much smaller than its 1-D hull.
// @run --global 256 --local 32 --arg A=rand:2560:1 --arg out=zeros:256 --arg m=10 --arg n=256
// @run --global 200 --local 8 --arg A=rand:1379:2 --arg out=zeros:197 --arg m=7 --arg n=197
// @expect splittable
// @float
__kernel void column_walk(__global const float *A, __global float *out,
                          int m, int n)
{
    int j = get_global_id(0);
    if (j < n) {
        float s = 0.0f;
        for (int i = 0; i < m; i++)
            s += A[i * n + j];
        out[j] = s;
    }
}

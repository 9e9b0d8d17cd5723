// A column picked by a run-time width, `X[i1*n + (n - 1)]` (the
// last column of an n x n matrix, as an ADI sweep's boundary step updates
// it). The width standing alone stays in the column subscript,
// `X[i1][n - 1]`, whose launch-time assumption `0 <= n - 1 < n` holds in
// any launch that does work; taken as one more row, `X[i1 + 1][-1]`, it
// needed `0 <= -1 < n`, which no launch meets, and every array went whole.
// @run --global 64 --local 16 --arg B=rand:4096:1 --arg X=rand:4096:2 --arg n=64
// @run --global 40 --local 8 --arg B=rand:1600:3 --arg X=rand:1600:4 --arg n=40
// @expect splittable
// @float
__kernel void last_column(__global const float *B, __global float *X, int n)
{
    int i1 = get_global_id(0);
    if (i1 < n)
        X[i1 * n + (n - 1)] = X[i1 * n + (n - 1)] / B[i1 * n + (n - 1)];
}

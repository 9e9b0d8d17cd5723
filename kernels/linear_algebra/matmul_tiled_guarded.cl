// Tiled matrix multiplication C (m x n) = A (m x k) * B (k x n) with 8x8
// __local tiles, three run-time sizes and guarded (zero-padded) tile loads,
// so sizes need not be multiples of the tile; barriers in the tile loop.
// @run --global 32,32 --local 8,8 --arg a=rand:1024:1 --arg b=rand:1024:2 --arg c=zeros:1024 --arg m=32 --arg n=32 --arg k=32
// @run --global 24,40 --local 8,8 --arg a=rand:740:3 --arg b=rand:460:4 --arg c=zeros:740 --arg m=37 --arg n=20 --arg k=20
// @expect splittable
// @float
#define TS 8

__kernel void matmul_tiled_guarded(__global const float *a, __global const float *b, __global float *c,
                                   int m, int n, int k)
{
    __local float as[TS][TS];
    __local float bs[TS][TS];
    int tx = get_local_id(0);
    int ty = get_local_id(1);
    int col = get_global_id(0);
    int row = get_global_id(1);
    float acc = 0.0f;
    for (int t = 0; t < (k + TS - 1) / TS; t++) {
        int ak = t * TS + tx;
        int bk = t * TS + ty;
        as[ty][tx] = (row < m && ak < k) ? a[row * k + ak] : 0.0f;
        bs[ty][tx] = (bk < k && col < n) ? b[bk * n + col] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int i = 0; i < TS; i++)
            acc += as[ty][i] * bs[i][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (row < m && col < n)
        c[row * n + col] = acc;
}

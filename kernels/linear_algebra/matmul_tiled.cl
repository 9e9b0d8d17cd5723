// Tiled matrix multiplication (NVIDIA SDK style) with 16x16 __local tiles and
// the classic two barriers inside the k-tile loop. a is (global_y x width),
// b is (width x width), c is (global_y x width); width must be a multiple of
// TILE and the work-group must be TILE x TILE.
// @run --global 64,64 --local 16,16 --arg a=rand:4096:1 --arg b=rand:4096:2 --arg c=zeros:4096 --arg width=64
// @run --global 48,80 --local 16,16 --arg a=rand:3840:3 --arg b=rand:2304:4 --arg c=zeros:3840 --arg width=48
// @expect splittable
// @float
#define TILE 16

__kernel void matmul_tiled(__global const float *a, __global const float *b,
                           __global float *c, int width)
{
    __local float as[TILE][TILE];
    __local float bs[TILE][TILE];
    int tx = get_local_id(0);
    int ty = get_local_id(1);
    int x = get_global_id(0);
    int y = get_global_id(1);
    float acc = 0.0f;

    for (int t = 0; t < width / TILE; t++) {
        as[ty][tx] = a[y * width + t * TILE + tx];
        bs[ty][tx] = b[(t * TILE + ty) * width + x];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TILE; k++)
            acc += as[ty][k] * bs[k][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    c[y * width + x] = acc;
}

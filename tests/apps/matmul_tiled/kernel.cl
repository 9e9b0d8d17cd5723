/* c = a * b for n x n matrices (n a multiple of TILE), with tiles of a and b
   staged in __local memory given as kernel arguments. */
#define TILE 16

__kernel void matmul_tiled(__global const float *a, __global const float *b, __global float *c,
                           __local float *as, __local float *bs, int n)
{
    int tx = get_local_id(0), ty = get_local_id(1);
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int t = 0; t < n / TILE; t++) {
        as[ty * TILE + tx] = a[row * n + t * TILE + tx];
        bs[ty * TILE + tx] = b[(t * TILE + ty) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TILE; k++)
            acc += as[ty * TILE + k] * bs[k * TILE + tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    c[row * n + col] = acc;
}

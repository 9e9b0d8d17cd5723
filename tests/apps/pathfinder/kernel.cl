/* Path finding through a grid of weights, as the heterogeneous suites
   write it: each launch advances `iteration` rows at once. A work-group
   holds a block of the current row in local memory, with `iteration`
   cells of halo on each side, and sweeps the rows, each step's valid
   part one cell narrower at both ends; its middle is written out. */
#define IN_RANGE(x, lo, hi) ((x) >= (lo) && (x) <= (hi))
#define MIN(a, b) ((a) <= (b) ? (a) : (b))

__kernel void dynproc(int iteration, __global const int *wall, __global const int *src,
                      __global int *dst, int cols, int start_step, int border,
                      __local int *prev, __local int *result)
{
    int bs = get_local_size(0);
    int bx = get_group_id(0), tx = get_local_id(0);
    int small = bs - 2 * iteration;
    int blk_x = small * bx - border;
    int blk_x_max = blk_x + bs - 1;
    int x = blk_x + tx;
    int valid_lo = blk_x < 0 ? -blk_x : 0;
    int valid_hi = blk_x_max > cols - 1 ? bs - 1 - (blk_x_max - cols + 1) : bs - 1;
    int w = tx - 1 < valid_lo ? valid_lo : tx - 1;
    int e = tx + 1 > valid_hi ? valid_hi : tx + 1;
    int valid = IN_RANGE(tx, valid_lo, valid_hi);
    if (IN_RANGE(x, 0, cols - 1))
        prev[tx] = src[x];
    barrier(CLK_LOCAL_MEM_FENCE);
    int computed = 0;
    for (int i = 0; i < iteration; i++) {
        computed = 0;
        if (IN_RANGE(tx, i + 1, bs - i - 2) && valid) {
            computed = 1;
            int shortest = MIN(prev[w], prev[tx]);
            shortest = MIN(shortest, prev[e]);
            result[tx] = shortest + wall[cols * (start_step + i) + x];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (i == iteration - 1)
            break;
        if (computed)
            prev[tx] = result[tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (computed)
        dst[x] = result[tx];
}

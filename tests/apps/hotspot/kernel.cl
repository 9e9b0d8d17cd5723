/* Transient chip temperature on a grid_rows x grid_cols grid, as the
   heterogeneous suites write it: one launch advances `iteration` time
   steps (a pyramid). A work-group loads a BLOCK_SIZE x BLOCK_SIZE tile of
   temperature and power (BLOCK_SIZE comes from -D) into local memory,
   `iteration` cells of halo on each side, steps it `iteration` times, the
   valid part one cell narrower at each step, and writes the tile's middle
   small block. Neighbours beyond the chip's edge are clamped to the cell
   itself. */
#define IN_RANGE(x, lo, hi) ((x) >= (lo) && (x) <= (hi))

__kernel void hotspot(int iteration, __global float *power, __global float *temp_src,
                      __global float *temp_dst, int grid_cols, int grid_rows,
                      int border_cols, int border_rows, float Cap, float Rx, float Ry,
                      float Rz, float step)
{
    __local float temp_on_tile[BLOCK_SIZE][BLOCK_SIZE];
    __local float power_on_tile[BLOCK_SIZE][BLOCK_SIZE];
    __local float temp_next[BLOCK_SIZE][BLOCK_SIZE];

    float amb_temp = 80.0f;
    float step_div_Cap = step / Cap;
    float Rx_1 = 1.0f / Rx, Ry_1 = 1.0f / Ry, Rz_1 = 1.0f / Rz;

    int bx = get_group_id(0), by = get_group_id(1);
    int tx = get_local_id(0), ty = get_local_id(1);

    /* the small block this tile finally computes, and the tile around it */
    int small_block_rows = BLOCK_SIZE - iteration * 2;
    int small_block_cols = BLOCK_SIZE - iteration * 2;
    int blkY = small_block_rows * by - border_rows;
    int blkX = small_block_cols * bx - border_cols;
    int blkYmax = blkY + BLOCK_SIZE - 1;
    int blkXmax = blkX + BLOCK_SIZE - 1;

    int yidx = blkY + ty;
    int xidx = blkX + tx;
    int loadYidx = yidx, loadXidx = xidx;
    int index = grid_cols * loadYidx + loadXidx;

    if (IN_RANGE(loadYidx, 0, grid_rows - 1) && IN_RANGE(loadXidx, 0, grid_cols - 1)) {
        temp_on_tile[ty][tx] = temp_src[index];
        power_on_tile[ty][tx] = power[index];
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    /* the part of the tile that lies on the chip */
    int validYmin = (blkY < 0) ? -blkY : 0;
    int validYmax = (blkYmax > grid_rows - 1) ? BLOCK_SIZE - 1 - (blkYmax - grid_rows + 1) : BLOCK_SIZE - 1;
    int validXmin = (blkX < 0) ? -blkX : 0;
    int validXmax = (blkXmax > grid_cols - 1) ? BLOCK_SIZE - 1 - (blkXmax - grid_cols + 1) : BLOCK_SIZE - 1;

    int N = ty - 1, S = ty + 1, W = tx - 1, E = tx + 1;
    N = (N < validYmin) ? validYmin : N;
    S = (S > validYmax) ? validYmax : S;
    W = (W < validXmin) ? validXmin : W;
    E = (E > validXmax) ? validXmax : E;

    bool computed;
    for (int i = 0; i < iteration; i++) {
        computed = false;
        if (IN_RANGE(tx, i + 1, BLOCK_SIZE - i - 2) && IN_RANGE(ty, i + 1, BLOCK_SIZE - i - 2) &&
            IN_RANGE(tx, validXmin, validXmax) && IN_RANGE(ty, validYmin, validYmax)) {
            computed = true;
            float t = temp_on_tile[ty][tx];
            temp_next[ty][tx] = t + step_div_Cap * (power_on_tile[ty][tx] +
                (temp_on_tile[S][tx] + temp_on_tile[N][tx] - 2.0f * t) * Ry_1 +
                (temp_on_tile[ty][E] + temp_on_tile[ty][W] - 2.0f * t) * Rx_1 +
                (amb_temp - t) * Rz_1);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (i == iteration - 1)
            break;
        if (computed)
            temp_on_tile[ty][tx] = temp_next[ty][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    if (computed)
        temp_dst[index] = temp_next[ty][tx];
}

// A 2-D grid-stride loop over the rows of a row-major matrix: work-item
// (c, r) scales column c of rows r, r + G1, r + 2G1, ..., G1 the global
// size along the rows, as image kernels written for any NDRange do.
// @run --global 64,8 --local 16,4 --arg in=rand:2048:1 --arg out=zeros:2048 --arg rows=32 --arg cols=64
// @run --global 32,6 --local 8,3 --arg in=rand:640:2 --arg out=rand:640:3 --arg rows=20 --arg cols=32
// @expect splittable
__kernel void grid_stride_rows(__global const int *in, __global int *out, int rows, int cols)
{
    int c = get_global_id(0);
    if (c >= cols)
        return;
    for (int r = get_global_id(1); r < rows; r += get_global_size(1))
        out[r * cols + c] = 2 * in[r * cols + c] + r;
}

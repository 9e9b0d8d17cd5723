// A loop bound computed in floating point, `t < ceil((float)width
// / TILE)` (the SDK idiom for a tile count): each work-item sums its row of
// `in` tile by tile and stores the tile sums tile-major. The bound is the
// integer ceil(width / 16) wherever |width| < 2^24 (so that `(float)width`
// is exact and the quotient cannot round across an integer), a launch-time
// assumption; it was "not an integer comparison", the loop unbounded and
// `sums` whole, the kernel unsplit.
// @run --global 64 --local 16 --arg in=rand:2560:1 --arg sums=zeros:192 --arg width=40 --arg height=64
// @run --global 56 --local 8 --arg in=rand:1584:2 --arg sums=zeros:144 --arg width=33 --arg height=48
// @expect splittable
// @float
#define TILE 16

__kernel void float_ceil_bound(__global const float *in, __global float *sums, int width, int height)
{
    int row = get_global_id(0);
    if (row >= height)
        return;
    for (int t = 0; t < ceil((float)width / TILE); t++) {
        float s = 0.0f;
        for (int k = 0; k < TILE; k++) {
            int col = t * TILE + k;
            if (col < width)
                s += in[row * width + col];
        }
        sums[t * height + row] = s;
    }
}

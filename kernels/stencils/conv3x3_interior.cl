// 2-D 3x3 convolution with a __constant filter on a w x h image,
// writing only the interior: the border of out keeps its initial values (out
// starts random), so the write box is the interior of the slice's rows.
// @run --global 64,32 --local 16,8 --arg in=rand:2048:1 --arg out=rand:2048:2 --arg f=rand:9:3 --arg w=64 --arg h=32
// @run --global 48,40 --local 8,8 --arg in=rand:1665:4 --arg out=rand:1665:5 --arg f=rand:9:6 --arg w=45 --arg h=37
// @expect splittable
// @float
__kernel void conv3x3_interior(__global const float *in, __global float *out,
                               __constant float *f, int w, int h)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= 1 && x < w - 1 && y >= 1 && y < h - 1) {
        float s = 0.0f;
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++)
                s += f[(dy + 1) * 3 + (dx + 1)] * in[(y + dy) * w + (x + dx)];
        out[y * w + x] = s;
    }
}

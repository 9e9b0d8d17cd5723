// Matrix transpose: out[x*height + y] = in[y*width + x], run-time sizes, with a
// guard so the global size can be rounded up. Reads are row-wise, writes
// column-wise: a slice along x writes a contiguous block of out.
// @run --global 64,32 --local 8,8 --arg in=rand:2048:1 --arg out=zeros:2048 --arg width=64 --arg height=32
// @run --global 40,24 --local 8,8 --arg in=rand:777:2 --arg out=zeros:777 --arg width=37 --arg height=21
// @expect splittable
__kernel void transpose(__global const float *in, __global float *out,
                        int width, int height)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < width && y < height)
        out[x * height + y] = in[y * width + x];
}

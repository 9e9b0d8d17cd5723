// 2-D 5-point stencil on a width x height grid with run-time sizes. The global
// size may be rounded up (outer guard); border points copy the input.
// @run --global 64,32 --local 16,8 --arg in=rand:2048:1 --arg out=zeros:2048 --arg width=64 --arg height=32
// @run --global 48,40 --local 8,8 --arg in=rand:1665:2 --arg out=zeros:1665 --arg width=45 --arg height=37
// @expect splittable
// @float
__kernel void stencil2d(__global const float *in, __global float *out,
                        int width, int height)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < width && y < height) {
        int idx = y * width + x;
        if (x > 0 && x < width - 1 && y > 0 && y < height - 1) {
            out[idx] = 0.2f * (in[idx] + in[idx - 1] + in[idx + 1]
                               + in[idx - width] + in[idx + width]);
        } else {
            out[idx] = in[idx];
        }
    }
}

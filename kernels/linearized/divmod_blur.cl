// A horizontal three-point blur over a 1-D NDRange whose pixel is
// recovered by remainder and division by the image width (`x = gid %
// width; y = gid / width`); the row's ends keep their value.
// @run --global 1024 --local 64 --arg in=rand:1024:1 --arg out=zeros:1024 --arg width=64
// @run --global 600 --local 8 --arg in=rand:600:2 --arg out=rand:600:3 --arg width=30
// @expect splittable
__kernel void divmod_blur(__global const int *in, __global int *out, int width)
{
    int gid = get_global_id(0);
    int x = gid % width;
    int y = gid / width;
    int at = y * width + x;
    if (x > 0 && x < width - 1)
        out[at] = in[at - 1] + 2 * in[at] + in[at + 1];
    else
        out[at] = in[at];
}

// A transpose over a 1-D NDRange, the 2-D position recovered by division
// and remainder by the width argument (`i = gid / width; j = gid %
// width`), as samples that launch one work-item per element write it.
// @run --global 1024 --local 64 --arg in=rand:1024:1 --arg out=zeros:1024 --arg width=32 --arg height=32
// @run --global 480 --local 16 --arg in=rand:480:2 --arg out=rand:480:3 --arg width=24 --arg height=20
// @expect splittable
__kernel void divmod_transpose(__global const int *in, __global int *out, int width, int height)
{
    int gid = get_global_id(0);
    int i = gid / width;
    int j = gid % width;
    if (i < height)
        out[j * height + i] = in[gid];
}

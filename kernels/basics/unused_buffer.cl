// A 2-D kernel with a buffer argument it never uses (spare): the
// spare array has an empty footprint and no box; out = a + 1 over a w x h
// image with the global size rounded up.
// @run --global 64,32 --local 16,8 --arg a=rand:2048:1 --arg spare=rand:64:2 --arg out=zeros:2048 --arg w=64 --arg h=32
// @run --global 48,40 --local 8,8 --arg a=rand:1665:3 --arg spare=rand:10:4 --arg out=zeros:1665 --arg w=45 --arg h=37
// @expect splittable
// @float
__kernel void unused_buffer(__global const float *a, __global float *spare,
                            __global float *out, int w, int h)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < w && y < h)
        out[y * w + x] = a[y * w + x] + 1.0f;
}

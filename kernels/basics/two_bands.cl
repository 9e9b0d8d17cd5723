// Each work-item reads two elements `dist` apart (a butterfly's
// operands), so a slice reads two bands of `in` whose 1-D hull holds
// everything between them. The slice's read runs (two, or one where the
// bands meet) move only the bands, and the guard checks every read
// against them.
// @run --global 512 --local 64 --arg in=rand:1024:1 --arg out=zeros:512 --arg dist=512
// @run --global 600 --local 8 --arg in=rand:1300:2 --arg out=zeros:600 --arg dist=700
// @expect splittable
// @float
__kernel void two_bands(__global const float *in, __global float *out, int dist)
{
    int i = get_global_id(0);
    out[i] = in[i] - in[i + dist];
}

// Clamped-edge blur: neighbour subscripts use the ?: operator and the integer
// min, max and clamp builtins (piecewise-affine subscripts); the value is
// clamped to [lo, hi] with the float clamp.
// @run --global 1024 --local 64 --arg in=rand:1024:1 --arg out=zeros:1024 --arg n=1024 --arg lo=0.2 --arg hi=0.8
// @run --global 1000 --local 8 --arg in=rand:993:2 --arg out=zeros:993 --arg n=993 --arg lo=0.1 --arg hi=0.6
// @expect splittable
// @float
__kernel void clamp_blur(__global const float *in, __global float *out,
                         int n, float lo, float hi)
{
    int i = get_global_id(0);
    if (i < n) {
        float far_left = in[max(i - 2, 0)];
        float left = in[i > 0 ? i - 1 : 0];
        float mid = in[i];
        float right = in[min(i + 1, n - 1)];
        float far_right = in[clamp(i + 2, 0, n - 1)];
        float avg = (far_left + left + mid + right + far_right) * 0.2f;
        out[i] = clamp(avg, lo, hi);
    }
}

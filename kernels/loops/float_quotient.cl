// Floating-point quotients of integers without ceil or floor:
// a loop bound `c < (float)width / 3` (the integers below the real
// quotient: c < ceil(width / 3)) and a loop start `(int)((float)width / 2)`
// (truncated toward zero). Each is the integer it rounds to wherever
// |width| < 2^24, a launch-time assumption. Each work-item scales the
// first third of its row of `a` into `lo` and copies the second half of
// its row of `b` into `hi`.
// @run --global 64 --local 16 --arg a=rand:2560:1 --arg b=rand:2560:2 --arg lo=zeros:2560 --arg hi=zeros:2560 --arg width=40 --arg height=64
// @run --global 56 --local 8 --arg a=rand:1584:3 --arg b=rand:1584:4 --arg lo=zeros:1584 --arg hi=zeros:1584 --arg width=33 --arg height=48
// @expect splittable
// @float
__kernel void float_quotient(__global const float *a, __global const float *b,
                             __global float *lo, __global float *hi, int width, int height)
{
    int row = get_global_id(0);
    if (row >= height)
        return;
    for (int c = 0; c < (float)width / 3; c++)
        lo[row * width + c] = 2.0f * a[row * width + c];
    for (int c = (int)((float)width / 2); c < width; c++)
        hi[row * width + c] = b[row * width + c];
}

// SAXPY with a grid-stride loop: i starts at the work-item's index relative to
// the global offset and advances by get_global_size(0). Each slice touches a
// strided set spanning the whole array (hulls overlap, elements are disjoint),
// and the subkernel must see the unsplit global size and offset.
// @run --global 256 --local 32 --arg x=rand:1000:1 --arg y=rand:1000:2 --arg a=2 --arg n=1000
// @run --global 120 --local 8 --arg x=rand:777:3 --arg y=rand:777:4 --arg a=-1.5 --arg n=777
// @expect splittable
// @float
__kernel void saxpy_offset(__global const float *x, __global float *y,
                           float a, int n)
{
    for (int i = get_global_id(0) - get_global_offset(0); i < n;
         i += get_global_size(0))
        y[i] = a * x[i] + y[i];
}

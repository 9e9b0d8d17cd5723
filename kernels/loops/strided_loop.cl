// A loop with a constant step of 64 walks one column of a 64-wide
// row-major array (k = i, i + 64, i + 128, ...). The accesses are written
// in the loop's iteration count t (k = i + 64*t), so the step shows as a
// stride: in[t][i] and out[t][i], a column band per slice, moved as one
// rect per array and device; the writes fill their box (no prefill).
// @run --global 64 --local 16 --arg in=rand:1024:1 --arg out=zeros:1024 --arg rows=16
// @run --global 48 --local 8 --arg in=rand:704:2 --arg out=rand:704:3 --arg rows=11
// @expect splittable
// @float
__kernel void strided_loop(__global const float *in, __global float *out, int rows)
{
    int i = get_global_id(0);
    for (int k = i; k < 64 * rows; k += 64)
        out[k] = 2.0f * in[k] + (float)(k / 64);
}

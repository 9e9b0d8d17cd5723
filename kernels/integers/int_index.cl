// The row-major index computed in `int` straight from the
// work-item ids, `int idx = get_global_id(1) * width + get_global_id(0)`
// with `int width` (the SDK idiom): a product in size_t converted to int.
// Modelled under two launch-time assumptions, `width >= 0` and that the
// index stays within int at the NDRange's largest ids
// ((gs1 + go1 - 1) * width + gs0 + go0 - 1 <= 2^31 - 1, a product that isl
// cannot express and the launcher evaluates); it was refused ("may wrap
// around in 'int'").
// @run --global 64,16 --local 8,4 --arg in=rand:1024:1 --arg out=zeros:1024 --arg width=64
// @run --global 40,12 --local 8,4 --arg in=rand:600:2 --arg out=zeros:600 --arg width=50
// @expect splittable

__kernel void int_index(__global const float *in, __global float *out, int width)
{
    int idx = get_global_id(1) * width + get_global_id(0);
    out[idx] = 0.5f * in[idx];
}

// A linearized subscript written with the work-item ids directly,
// `get_global_id(1) * width + get_global_id(0)` with `int width` (the SDK
// idiom): the product is computed in size_t, `width` converted to it, which
// wraps around if it is negative. Modelled under the launch-time assumption
// `width >= 0`, checked at every launch (it was refused: "may wrap around
// in 'ulong'").
// @run --global 64,16 --local 8,4 --arg in=rand:1024:1 --arg out=zeros:1024 --arg width=64
// @run --global 48,10 --local 16,2 --arg in=rand:600:2 --arg out=zeros:600 --arg width=60
// @expect splittable

__kernel void size_t_times_int(__global const float *in, __global float *out, int width)
{
    out[get_global_id(1) * width + get_global_id(0)] =
        in[get_global_id(1) * width + get_global_id(0)] + 1.0f;
}

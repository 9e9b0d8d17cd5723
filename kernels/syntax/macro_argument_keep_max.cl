// A running maximum kept through a macro that compares its first argument
// and assigns it, as reduction-style codes write it: `out[x]` is read by
// one expansion and written by another. The guard checks that argument's
// subscript once, as read and written.
// @run --global 256 --local 32 --arg in=rand:512:1 --arg out=rand:256:2 --arg n=250
// @run --global 96 --local 16 --arg in=rand:192:3 --arg out=zeros:96 --arg n=96
// @expect splittable
#define KEEP_MAX(a, v) if ((v) > (a)) (a) = (v)

__kernel void macro_argument_keep_max(__global const int *in, __global int *out, int n)
{
    int x = get_global_id(0);
    if (x >= n)
        return;
    KEEP_MAX(out[x], in[2 * x]);
    KEEP_MAX(out[x], in[2 * x + 1]);
}

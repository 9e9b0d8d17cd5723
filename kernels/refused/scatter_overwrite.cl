// Scatter into a ring with a real conflict: out[idx[i] % m] = in[i]. The
// runs' idx is the identity, so work-item i and work-item i + m write one
// element with different values, and which value stays depends on the
// order of the work-groups. Split, two devices write different values to
// one element: the run-time check detects it, the split results are
// discarded and the launch runs unsplit, as one device gives it.
// @run --global 1024 --local 64 --arg in=rand:1024:1 --arg idx=seq:1024 --arg out=zeros:512 --arg m=512
// @run --global 1000 --local 8 --arg in=rand:1000:3 --arg idx=seq:1000 --arg out=rand:500:5 --arg m=500
// @float
// @order-dependent
// @expect not-splittable whole=out
__kernel void scatter_overwrite(__global const float *in, __global const int *idx,
                                __global float *out, int m)
{
    int i = get_global_id(0);
    out[idx[i] % m] = in[i];
}

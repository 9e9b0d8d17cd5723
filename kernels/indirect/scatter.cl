// Plain indirect write (scatter): out[idx[i]] = in[i]. The runs use the
// identity permutation (seq), so the output is deterministic, but nothing
// proves statically that two slices write different elements: out goes
// whole to each device and the copies merge element by element, the
// run-time check finding no element written by two devices.
// @run --global 1024 --local 64 --arg in=rand:1024:1 --arg idx=seq:1024 --arg out=zeros:1024
// @run --global 1000 --local 8 --arg in=rand:1000:2 --arg idx=seq:1000 --arg out=zeros:1000
// @expect splittable whole=out
__kernel void scatter(__global const float *in, __global const int *idx,
                      __global float *out)
{
    int i = get_global_id(0);
    out[idx[i]] = in[i];
}

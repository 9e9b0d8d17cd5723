// Every work-item writes the same element flag[0] (with the same value, so the
// result is deterministic) next to an ordinary element-wise write. The writes
// to flag overlap between all slices and are merged element by element,
// the run-time check finding only equal values.
// @run --global 1024 --local 64 --arg in=rand:1000:1 --arg out=zeros:1000 --arg flag=zeros:1 --arg n=1000
// @run --global 1000 --local 8 --arg in=rand:999:2 --arg out=zeros:999 --arg flag=zeros:1 --arg n=999
// @expect splittable
__kernel void flag_write(__global const float *in, __global float *out,
                         __global int *flag, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        out[i] = in[i] * 2.0f;
        flag[0] = n;
    }
}

// The last work-item to finish takes a ticket: t = atomic_inc(&count[0]),
// and the one that draws n - 1 writes the flag. The atomic's returned value
// is used, so the copies of count cannot merge as a sum (which device draws
// which ticket depends on the others): the kernel is not split.
// @run --global 1024 --local 64 --arg in=rand:1024:1 --arg out=zeros:1024 --arg count=zeros:1 --arg done=zeros:1 --arg n=1024
// @run --global 1000 --local 8 --arg in=rand:999:2 --arg out=zeros:999 --arg count=zeros:1 --arg done=zeros:1 --arg n=999
// @expect not-splittable
__kernel void atomic_ticket(__global const float *in, __global float *out,
                            __global uint *count, __global int *done, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        out[i] = in[i] * 0.5f;
        uint t = atomic_inc(&count[0]);
        if (t == (uint)n - 1)
            done[0] = 1;
    }
}

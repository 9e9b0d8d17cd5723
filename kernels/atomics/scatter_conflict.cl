// Scatter-add with global atomics: atomic_add(&out[idx[i]], in[i]).
// Different work-groups may add into the same element; the atomic's result
// is unused and out is only updated by it, so each device adds into a whole
// copy and the copies merge as the original plus each device's change
// (integer addition commutes, so the result is deterministic).
// @run --global 1024 --local 64 --arg in=seq:1024 --arg idx=rand:1024:1 --arg out=zeros:1024
// @run --global 1000 --local 8 --arg in=seq:1000 --arg idx=rand:1000:2 --arg out=rand:1000:3
// @expect splittable whole=out
__kernel void scatter_conflict(__global const int *in, __global const int *idx,
                               __global int *out)
{
    int i = get_global_id(0);
    atomic_add(&out[idx[i]], in[i]);
}

// Work-group sum reduction into a __local scratch argument: a tree loop with a
// barrier inside it, one partial sum per work-group written to
// out[get_group_id(0)]. The work-group size must be a power of two; the tree
// is written with a canonical decrementing level loop (stride 1 << lvl).
// @run --global 1024 --local 64 --arg in=rand:1024:1 --arg out=zeros:16 --arg scratch=local:64 --arg n=1024
// @run --global 1000 --local 8 --arg in=rand:997:2 --arg out=zeros:125 --arg scratch=local:8 --arg n=997
// @run --global 1024 --local 32 --arg in=rand:1000:3 --arg out=zeros:32 --arg scratch=local:32 --arg n=1000
// @expect splittable
// @float
int ilog2(int v)
{
    int r = 0;
    for (int b = 1; b < 31; b++)
        if ((v >> b) != 0)
            r = b;
    return r;
}

__kernel void reduce_sum(__global const float *in, __global float *out,
                         __local float *scratch, int n)
{
    int gid = get_global_id(0);
    int lid = get_local_id(0);
    int nlev = ilog2(get_local_size(0));

    scratch[lid] = (gid < n) ? in[gid] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int lvl = nlev - 1; lvl >= 0; lvl--) {
        int s = 1 << lvl;
        if (lid < s)
            scratch[lid] += scratch[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[get_group_id(0)] = scratch[0];
}

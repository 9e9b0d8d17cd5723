// 256-bin histogram, first stage without atomics: work-group g counts its
// chunk of the data into partial[g*256 .. g*256+255]; each work-item loops
// over the bins lid, lid + local size, ... and, per bin, over the chunk.
// Loops over bins with a run-time step and a data-dependent count per bin.
// @run --global 256 --local 64 --arg data=rand:256:1 --arg partial=zeros:1024 --arg chunk=64
// @run --global 96 --local 32 --arg data=rand:240:2 --arg partial=zeros:768 --arg chunk=80
// @expect splittable
#define BINS 256

__kernel void histogram256_partial(__global const uchar *data, __global uint *partial, int chunk)
{
    int g = get_group_id(0);
    int lid = get_local_id(0);
    int ls = get_local_size(0);
    for (int b = lid; b < BINS; b += ls) {
        uint n = 0;
        for (int i = 0; i < chunk; i++)
            n += (data[g * chunk + i] == b) ? 1 : 0;
        partial[g * BINS + b] = n;
    }
}

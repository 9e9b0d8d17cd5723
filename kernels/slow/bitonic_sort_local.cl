// Bitonic sort of 128-element blocks in __local memory (the local stage of
// sort samples): each work-group of 64 loads its block, runs the size and
// stride passes as two nested level loops with a barrier per pass, and
// writes the block back sorted. Needs a work-group size of 64.
// @run --global 256 --local 64 --arg data=rand:512:1 --arg buf=local:128
// @run --global 320 --local 64 --arg data=rand:640:2 --arg buf=local:128
// @expect splittable
#define LS 64
#define LOG2_BLOCK 7

__kernel void bitonic_sort_local(__global int *data, __local int *buf)
{
    int lid = get_local_id(0);
    int base = get_group_id(0) * 2 * LS;
    buf[lid] = data[base + lid];
    buf[lid + LS] = data[base + lid + LS];
    for (int lvl = 1; lvl <= LOG2_BLOCK; lvl++) {
        int size = 1 << lvl;
        for (int sl = lvl - 1; sl >= 0; sl--) {
            int stride = 1 << sl;
            barrier(CLK_LOCAL_MEM_FENCE);
            int pos = 2 * lid - lid % stride;
            int up = ((pos / size) % 2) == 0;
            int a = buf[pos];
            int b = buf[pos + stride];
            if ((a > b) == up) {
                buf[pos] = b;
                buf[pos + stride] = a;
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    data[base + lid] = buf[lid];
    data[base + lid + LS] = buf[lid + LS];
}

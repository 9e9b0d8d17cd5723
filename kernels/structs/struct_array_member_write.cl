// Per-element records whose struct holds an array (`float sums[4]`),
// written member by member by the work-item that owns the record: each
// write is part of element i, so the writes stay within the slice's
// records and split exactly.
// @run --global 256 --local 32 --arg in=rand:1024:1 --arg bins=zeros:256 --arg n=250
// @run --global 96 --local 16 --arg in=rand:384:2 --arg bins=zeros:96 --arg n=96
// @expect splittable
// @float
typedef struct {
    int count;
    float sums[4];
} bin_t;

__kernel void struct_array_member_write(__global const float *in, __global bin_t *bins, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    bins[i].count = 4;
    for (int k = 0; k < 4; k++)
        bins[i].sums[k] = in[4 * i + k] * (float)(k + 1);
}

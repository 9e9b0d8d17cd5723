// 256-bin histogram, merge stage: one work-group per bin sums that bin over
// n_partials partial histograms (partial[p*256 + bin]), each work-item a
// strided share of them, then a tree reduction in __local memory.
// A loop with a run-time bound and step over a 256-strided array.
// @run --global 4096 --local 16 --arg partial=rand:16384:1 --arg hist=zeros:256 --arg n_partials=64 --arg scratch=local:16
// @run --global 2560 --local 10 --arg partial=rand:5888:2 --arg hist=zeros:256 --arg n_partials=23 --arg scratch=local:10
// @expect splittable
#define BINS 256

__kernel void histogram256_merge(__global const uint *partial, __global uint *hist, int n_partials,
                                 __local uint *scratch)
{
    int bin = get_group_id(0);
    int lid = get_local_id(0);
    int ls = get_local_size(0);
    uint sum = 0;
    for (int p = lid; p < n_partials; p += ls)
        sum += partial[p * BINS + bin];
    scratch[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        uint total = 0;
        for (int k = 0; k < ls; k++)
            total += scratch[k];
        hist[bin] = total;
    }
}

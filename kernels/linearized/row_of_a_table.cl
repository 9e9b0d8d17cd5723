// A row picked by a scalar, `in[row*w + x]`, read by more
// work-items than the row is wide (x runs past w into the next rows: a
// launch the delinearization's assumption `0 <= x < w` does not cover).
// That assumption belongs to `in` alone: where it fails at launch, `in` is
// transferred whole and `out` keeps its exact ranges; before, one failed
// assumption sent every array whole and ran the kernel unsplit.
// @run --global 64 --local 16 --arg out=zeros:64 --arg in=rand:256:1 --arg w=32 --arg row=2
// @run --global 40 --local 8 --arg out=zeros:40 --arg in=rand:200:2 --arg w=16 --arg row=3
// @expect splittable
// @float
__kernel void row_of_a_table(__global float *out, __global const float *in, int w, int row)
{
    int x = get_global_id(0);
    out[x] = 2.0f * in[row * w + x];
}

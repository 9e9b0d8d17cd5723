// Bitonic sort, global merge step (one launch per (size, stride) pass, as
// sort samples do): work-item i compares the pair (pos, pos + stride) with
// pos = (i / stride) * 2 * stride + i % stride and swaps it into the
// direction of its size-block. Subscripts divide by a run-time scalar, so
// the parametric analysis cannot bound them; at launch the stride and size
// are known and the ranges are specialized on them.
// @run --global 512 --local 64 --arg data=rand:1024:1 --arg size=8 --arg stride=4
// @run --global 500 --local 20 --arg data=rand:1000:2 --arg size=16 --arg stride=2
// @expect splittable
__kernel void bitonic_merge(__global int *data, int size, int stride)
{
    int i = get_global_id(0);
    int pos = (i / stride) * 2 * stride + i % stride;
    int up = ((pos / size) % 2) == 0;
    int a = data[pos];
    int b = data[pos + stride];
    if ((a > b) == up) {
        data[pos] = b;
        data[pos + stride] = a;
    }
}

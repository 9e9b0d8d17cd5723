// A buffer of uint2 pairs seen as uints through a pointer cast to
// `__global uint *`: work-item i reads the first uint of pair i and writes
// its second, part of the pair (a may-write of the pair, which is read
// too, so the part not written keeps its value). The cast was refused.
// The analysis splits it, and the run-time guard checks each uint against
// the window of the pair holding it (a view of narrower elements).
// @run --global 512 --local 64 --arg pairs=seq:512 --arg n=512
// @run --global 120 --local 8 --arg pairs=seq:130 --arg n=100
// @expect splittable
__kernel void ptr_cast_uint(__global uint2 *pairs, int n)
{
    int i = get_global_id(0);
    __global uint *w = (__global uint *)pairs;
    if (i < n)
        w[2 * i + 1] = w[2 * i] * 3u + 1u;
}

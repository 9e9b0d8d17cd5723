// A work-group's base index computed in `int` from its group id
// (`get_group_id(0) * TILE`, the SDK idiom), a __local tile reversed. The
// conversion to int could wrap only past 2^31 work-items: it is modelled
// without the wrap-around under a launch-time assumption (gs0 <= 2^31),
// checked at every launch, instead of mod 2^32 terms that made isl's bounds
// run for seconds (the slow set's convolution_rows and bitonic_sort_local).
// @run --global 256 --local 16 --arg in=rand:256:1 --arg out=zeros:256
// @run --global 320 --local 16 --arg in=rand:320:2 --arg out=zeros:320
// @expect splittable
#define TILE 16

__kernel void group_tile(__global const float *in, __global float *out)
{
    __local float tile[TILE];
    int base = get_group_id(0) * TILE;
    int lid = get_local_id(0);
    tile[lid] = in[base + lid];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[base + lid] = tile[TILE - 1 - lid];
}

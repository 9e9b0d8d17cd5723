// Indexing by get_group_id(0)*get_local_size(0) + get_local_id(0), with
// get_num_groups(0) in both a subscript and a value: work-group g writes the
// mirrored block num_groups-1-g of out, and its first element to firsts[g].
// A subkernel must see the unsplit group ids and group count.
// @run --global 1024 --local 64 --arg in=rand:1024:1 --arg out=zeros:1024 --arg firsts=zeros:16
// @run --global 1000 --local 8 --arg in=rand:1000:2 --arg out=zeros:1000 --arg firsts=zeros:125
// @expect splittable
__kernel void group_id_write(__global const int *in, __global int *out,
                             __global int *firsts)
{
    int g = get_group_id(0);
    int ng = get_num_groups(0);
    int ls = get_local_size(0);
    int lid = get_local_id(0);
    int i = g * ls + lid;
    out[(ng - 1 - g) * ls + lid] = in[i] + ng;
    if (lid == 0)
        firsts[g] = in[i];
}

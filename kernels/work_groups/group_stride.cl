// A loop over rows whose step is the number of work-groups (`for
// (y = get_group_id(0); y < rows; y += get_num_groups(0))`: each group
// takes every ng-th row). Parametric in ng the rows of different groups
// cannot be told apart, so the writes were not proved disjoint and the
// kernel ran whole; specialized on the launch's sizes (global size and
// number of work-groups) the step is a constant, the writes are disjoint
// and each slice moves only its own rows.
// @run --global 64 --local 16 --arg out=zeros:1024 --arg in=rand:1024:1 --arg rows=64 --arg w=16
// @run --global 24 --local 8 --arg out=zeros:400 --arg in=rand:400:2 --arg rows=50 --arg w=8
// @expect splittable
// @float
__kernel void group_stride(__global float *out, __global const float *in, int rows, int w)
{
    int x = get_local_id(0);
    for (int y = get_group_id(0); y < rows; y += get_num_groups(0))
        out[y * w + x] = 2.0f * in[y * w + x] + 1.0f;
}

// One step of a min-plus dynamic program written through MIN and MAX
// macros, as path-finding codes write it: the subscripts and the
// work-item's index are macro arguments, each expanded twice. The guard
// checks each argument's subscript once, where the argument is written.
// @run --global 256 --local 32 --arg cost=rand:256:1 --arg row=rand:256:2 --arg out=zeros:256 --arg n=250
// @run --global 96 --local 16 --arg cost=rand:96:3 --arg row=rand:96:4 --arg out=rand:96:5 --arg n=96
// @expect splittable
#define MIN(a, b) ((a) <= (b) ? (a) : (b))
#define MAX(a, b) ((a) >= (b) ? (a) : (b))

__kernel void macro_argument_min(__global const int *cost, __global const int *row,
                                 __global int *out, int n)
{
    int x = (int)MAX(get_global_id(0), (size_t)0);
    if (x >= n)
        return;
    int l = MAX(x - 1, 0);
    int r = MIN(x + 1, n - 1);
    out[x] = MIN(row[l], MIN(row[x], row[r])) + cost[x];
}

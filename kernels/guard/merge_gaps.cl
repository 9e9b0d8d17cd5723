// The guarantee: each work-item writes two runs of every row, and the
// slices' writes interleave (`out[r*16 + i]` and `out[r*16 + i + 8]`): a
// slice's written elements are a box of runs with gaps that the other
// slice writes. At a launch's values the split merges `out` element by
// element (diff-merge): the merge compared each device's whole write range
// with the host's original, but only the box's runs were sent to the
// device: the gaps came back as whatever the device buffer held, were
// taken as writes, and replaced the other slice's values (a wrong result,
// with the guard on or off). The merge now compares the write set's
// elements only, which the device holds first or writes.
// @run --global 8 --local 2 --arg out=rand:32:7
// @run --global 6 --local 2 --arg out=rand:32:5
// @expect splittable
// @float
__kernel void merge_gaps(__global float *out)
{
    int i = get_global_id(0);
    for (int r = 0; r < 2; ++r) {
        out[r * 16 + i] = 1.0f;
        out[r * 16 + i + 8] = 2.0f;
    }
}

// Found probing the layer: a 1-D kernel that linearizes
// `get_global_id(1)` too, launched as 2-D with a trailing 1. Without sizes
// the analysis splits along dimension 1 (its slices are rows), which has one
// work-group at this launch: the launch was "split" with every work-group on
// one device and the other's transfers for nothing. At a launch whose chosen
// dimension has one work-group, the dimension with the most splits instead.
// Launched 1-D, it was refused ("analyzed for 2 dimensions, the ndrange has
// 1"); an analysis for a launch now has the launch's dimensions, the others
// being one work-item (`get_global_id(1)` is 0).
// @run --global 4096,1 --local 64,1 --arg a=rand:4096:1 --arg k=2
// @run --global 96,1 --local 8,1 --arg a=seq:96 --arg k=3
// @run --global 256 --local 32 --arg a=rand:256:5 --arg k=4
// @expect splittable
// @float
__kernel void trailing_one_linear(__global float *a, float k)
{
    size_t i = get_global_id(0) + get_global_id(1) * get_global_size(0);
    a[i] = a[i] * k + 2.0f;
}

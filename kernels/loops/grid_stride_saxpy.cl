// A grid-stride loop as portable kernels write it: each work-item takes
// elements i, i + G, i + 2G, ... of the vector, G the global size, so any
// NDRange covers any n. Analyzed at the launch's global size, a slice's
// elements are a set of strided runs, disjoint from the other slices'.
// @run --global 256 --local 32 --arg n=1000 --arg a=2 --arg x=rand:1000:1 --arg y=rand:1000:2
// @run --global 96 --local 16 --arg n=500 --arg a=3 --arg x=rand:500:3 --arg y=zeros:500
// @expect splittable
__kernel void grid_stride_saxpy(int n, int a, __global const int *x, __global int *y)
{
    for (int i = get_global_id(0); i < n; i += get_global_size(0))
        y[i] = a * x[i] + y[i];
}

// Vector addition (thesis listing 4.3): c[i] = a[i] + b[i] on int arrays.
// The simplest affine 1-D kernel; every array has the same footprint.
// @run --global 1024 --local 64 --arg a=rand:1024:1 --arg b=rand:1024:2 --arg c=zeros:1024
// @run --global 1000 --local 8 --arg a=rand:1000:3 --arg b=rand:1000:4 --arg c=zeros:1000
// @expect splittable
__kernel void vadd(__global const int *a, __global const int *b, __global int *c)
{
    int i = get_global_id(0);
    c[i] = a[i] + b[i];
}

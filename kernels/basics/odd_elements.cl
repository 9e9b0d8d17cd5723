// Strided reads. b[i] = 2 * a[2*i + 1]: a slice reads every other
// element of a (the odd ones). The literal stride 2 delinearizes a as a[i][1]
// (strides [2, 1]); its box is a strided set that moves as one rect command
// (rows of one element, pitch 2) instead of the 1-D hull.
// @run --global 1024 --local 64 --arg a=rand:2048:1 --arg b=zeros:1024
// @run --global 1000 --local 8 --arg a=rand:2000:2 --arg b=zeros:1000
// @expect splittable
// @float
__kernel void odd_elements(__global const float *a, __global float *b)
{
    int i = get_global_id(0);
    b[i] = 2.0f * a[2 * i + 1];
}

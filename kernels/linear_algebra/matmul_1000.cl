// Matrix multiplication with the width hard-coded to 1000 (thesis listing 4.4,
// the "pathologic example"): c[x + y*1000] = sum_i a[i + y*1000] * b[x + i*1000].
// All subscripts are affine with constant coefficients. Splitting along x gives
// slices whose c hulls overlap but whose written elements are disjoint.
// @run --global 64,16 --local 8,8 --arg c=zeros:16000 --arg a=rand:16000:1 --arg b=rand:1000000:2
// @run --global 1000,3 --local 8,1 --arg c=zeros:3000 --arg a=rand:3000:3 --arg b=rand:1000000:4
// @expect splittable
// @float
__kernel void matmul_1000(__global float *c, __global const float *a,
                          __global const float *b)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    float element = 0.0f;
    for (int i = 0; i < 1000; i++)
        element += a[i + y * 1000] * b[x + i * 1000];
    c[x + y * 1000] = element;
}

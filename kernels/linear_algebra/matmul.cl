// Matrix multiplication with a run-time width (listing 4.4 without the
// hard-coded 1000): c[y*width + x] = sum_i a[y*width + i] * b[i*width + x].
// The linearized subscripts are non-affine in the parameters (y*width).
// @run --global 64,48 --local 16,8 --arg c=zeros:3072 --arg a=rand:3072:1 --arg b=rand:4096:2 --arg width=64
// @run --global 40,30 --local 8,6 --arg c=zeros:1200 --arg a=rand:1200:3 --arg b=rand:1600:4 --arg width=40
// @expect splittable
// @float
__kernel void matmul(__global float *c, __global const float *a,
                     __global const float *b, int width)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    float element = 0.0f;
    for (int i = 0; i < width; i++)
        element += a[y * width + i] * b[i * width + x];
    c[y * width + x] = element;
}

/* c = a + b over n elements; the host launches it as a 2-D NDRange with a
   trailing size 1. */
__kernel void vadd(__global const float *a, __global const float *b,
                   __global float *c, const int n)
{
    int i = get_global_id(0);
    if (i < n)
        c[i] = a[i] + b[i];
}

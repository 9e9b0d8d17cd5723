/* b = 2 * a. */
__kernel void twice(__global const float *a, __global float *b, int n)
{
    int i = get_global_id(0);
    if (i < n)
        b[i] = 2.0f * a[i];
}

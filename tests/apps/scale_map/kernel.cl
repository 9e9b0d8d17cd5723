/* x = x * s + 1, in place. */
__kernel void scale(__global float *x, float s, int n)
{
    int i = get_global_id(0);
    if (i < n)
        x[i] = x[i] * s + 1.0f;
}

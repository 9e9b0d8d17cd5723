/* Built from source, then again from the first build's binary. */
__kernel void scale(__global float *y, float s, int n)
{
    int i = get_global_id(0);
    if (i < n)
        y[i] = y[i] * s;
}

/* Kernels over buffers the layer keeps resident, for ../migrate/main.c. */
__kernel void axpb(__global float *x, float a, float b, int n)
{
    int i = get_global_id(0);
    if (i < n)
        x[i] = a * x[i] + b;
}

/* y[i] = x[i] + x[i - 1]. */
__kernel void neighbor(__global const float *x, __global float *y, int n)
{
    int i = get_global_id(0);
    if (i < n)
        y[i] = x[i] + (i > 0 ? x[i - 1] : 0.0f);
}

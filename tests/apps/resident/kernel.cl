/* Kernels over buffers the layer keeps resident, for ../resident/main.c. */
__kernel void axpb(__global float *x, float a, float b, int n)
{
    int i = get_global_id(0);
    if (i < n)
        x[i] = a * x[i] + b;
}

/* The same buffer seen as float4. */
__kernel void scale4(__global float4 *x, float a, int n4)
{
    int i = get_global_id(0);
    if (i < n4)
        x[i] = a * x[i];
}

/* y[i] = x[i] + x[i - 1]: each slice reads one element of its neighbour's. */
__kernel void neighbor(__global const float *x, __global float *y, int n)
{
    int i = get_global_id(0);
    if (i < n)
        y[i] = x[i] + (i > 0 ? x[i - 1] : 0.0f);
}

/* Negates the elements above a bound and counts them with a global atomic
   whose value is unused: split, each device counts into its own copy of
   count, and the copies merge as a sum. */
__kernel void negate_above(__global float *x, __global int *count, float bound, int n)
{
    int i = get_global_id(0);
    if (i < n && x[i] > bound) {
        x[i] = -x[i];
        atomic_inc(count);
    }
}

/* Kernels for ../native_image/main.c. */
__kernel void axpb(__global float *x, float a, float b, int n)
{
    int i = get_global_id(0);
    if (i < n)
        x[i] = a * x[i] + b;
}

/* out[i] = 2 * x[i], x read through a 1-D image made from its buffer. */
__kernel void twice_image(__read_only image1d_buffer_t x, __global float *out, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = 2.0f * read_imagef(x, i).x;
}

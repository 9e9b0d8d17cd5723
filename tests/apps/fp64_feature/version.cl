/* The OpenCL C version the kernel was compiled for, per work-item. */
__kernel void version(__global int* v)
{
    int i = get_global_id(0);
    v[i] = __OPENCL_C_VERSION__ + i % 3;
}

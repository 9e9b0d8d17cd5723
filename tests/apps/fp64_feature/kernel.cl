/* Row sums accumulated in double where the device compiles OpenCL C with
 * 64-bit floating point, in float elsewhere: which one the driver decides. */
#if defined(__opencl_c_fp64) || defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double acc_t;
#else
typedef float acc_t;
#endif

__kernel void row_sum(__global const float* a, __global float* out, int n)
{
    int i = get_global_id(0);
    acc_t s = 0;
    for (int j = 0; j < n; j++)
        s += (acc_t)a[i * n + j] * (acc_t)1.0001f;
    out[i] = (float)s;
}

// Issue 10: a write through a pointer -> ulong -> pointer round trip. The
// pointer made from an integer may point into any buffer: both are whole.
// @run --global 512 --local 64 --arg a=zeros:512 --arg b=rand:512:1
// @run --global 600 --local 8 --arg a=zeros:600 --arg b=rand:600:2
// @expect not-splittable whole=a,b
__kernel void issue10_ptr_int_cast(__global float *a, __global float *b)
{
    int i = get_global_id(0);
    ulong u = (ulong)a;
    __global float *p = (__global float *)u;
    p[i] = b[i];
}

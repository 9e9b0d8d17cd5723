// A write through a pointer that went through an integer
// (`__global int *` -> `ulong` -> `__global int *`). Its target cannot be
// tracked, so it may be any buffer: every buffer is whole and written back.
// It used to be "not accessed", leaving `a` all zeros. The guard cannot
// check the pointer, so with it on the kernel runs unsplit.
// @run --global 64 --local 16 --arg a=zeros:64 --arg b=rand:64:1
// @expect not-splittable whole=a,b
__kernel void ptr_int_cast(__global int *a, __global const int *b)
{
    int i = get_global_id(0);
    ulong addr = (ulong)a;
    __global int *q = (__global int *)addr;
    q[i] = b[i] + 1;
}

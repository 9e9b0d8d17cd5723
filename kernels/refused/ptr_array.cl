// A private array of buffer pointers. Pointers loaded from memory
// cannot be tracked: every buffer is a candidate, accessed whole.
// @run --global 512 --local 64 --arg a=zeros:512 --arg b=rand:512:1
// @run --global 600 --local 8 --arg a=zeros:600 --arg b=rand:600:2
// @expect not-splittable whole=a,b
__kernel void ptr_array(__global float *a, __global float *b)
{
    int i = get_global_id(0);
    __global float *ptrs[2];
    ptrs[0] = a;
    ptrs[1] = b;
    __global float **q = ptrs;
    q[0][i] = q[1][i];
}

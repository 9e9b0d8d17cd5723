// Pointers swapped in a loop (ping-pong buffers). After the first
// iteration src may be b and dst may be a: both are read and written.
// @run --global 512 --local 64 --arg a=seq:512 --arg b=zeros:512 --arg n=3
// @run --global 600 --local 8 --arg a=seq:600 --arg b=zeros:600 --arg n=4
// @expect not-splittable whole=a,b
__kernel void ptr_swap(__global int *a, __global int *b, int n)
{
    int i = get_global_id(0);
    __global int *src = a;
    __global int *dst = b;
    __global int *t;
    for (int s = 0; s < n; s++) {
        dst[i] = src[i] + 1;
        t = src;
        src = dst;
        dst = t;
    }
}

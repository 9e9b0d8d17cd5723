// Buffers seen through narrower elements: the bytes of an int
// buffer through `__global uchar *`, the words of a uint2 buffer through
// `__global const uint *`. Work-item i flips byte 1 of int i with the low
// byte of the second word of pair i and bumps byte 3 (read-modify-writes
// of parts of an element: may-writes, merged element-wise). The guard
// checks each byte or word against the window of the element holding it.
// @run --global 256 --local 32 --arg a=seq:256 --arg p=seq:512 --arg n=250
// @run --global 120 --local 8 --arg a=seq:130 --arg p=seq:260 --arg n=100
// @expect splittable
__kernel void view_bytes(__global int *a, __global const uint2 *p, int n)
{
    int i = get_global_id(0);
    __global uchar *b = (__global uchar *)a;
    __global const uint *q = (__global const uint *)p;
    if (i < n) {
        b[4 * i + 1] ^= (uchar)(q[2 * i + 1] & 0xffu);
        b[4 * i + 3] += 1;
    }
}

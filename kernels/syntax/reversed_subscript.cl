// The guarantee: `i[b]` is `b[i]` in C, and `(n - 1 - i)[a]` is
// `a[n - 1 - i]`. The front end kept the integer as the subscript's
// pointer, so the analysis saw no access at all: `b` was "not accessed",
// an unsplit run did not copy it back (a wrong result, with the guard on),
// and a split one under --unchecked indexed a buffer it had not sized (a
// crash). The front end now puts the pointer first, whatever the order.
// @run --global 64 --local 8 --arg a=seq:64 --arg b=zeros:64 --arg n=64
// @run --global 48 --local 16 --arg a=rand:50:3 --arg b=zeros:48 --arg n=50
// @expect splittable
// @float
__kernel void reversed_subscript(__global const float *a, __global float *b, int n)
{
    int i = get_global_id(0);
    i[b] = (n - 1 - i)[a] * 3.0f + i[a];
}

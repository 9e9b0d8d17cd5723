// Unsigned wrap-around. k = i + 4294967295u is i - 1 in 32-bit
// unsigned arithmetic; the analysis models it as (i + 2^32 - 1) mod 2^32.
// Parametric analysis alone cannot prove the writes disjoint; specialized on
// the launch's NDRange (as clpart run does) it can, and the kernel splits.
// @run --global 512 --local 64 --arg a=zeros:512 --arg b=seq:512
// @run --global 600 --local 8 --arg a=zeros:600 --arg b=seq:600
// @expect splittable
__kernel void uint_wrap(__global int *a, __global const int *b)
{
    uint i = get_global_id(0);
    uint k = i + 4294967295u;
    if (i > 0)
        a[k] = b[i];
}

// A narrowing conversion in a read subscript. b[(ushort)(i + 65530)]
// reads b[(i + 65530) mod 65536]: the footprint of b is the exact remainder,
// not i + 65530.
// @run --global 512 --local 64 --arg a=zeros:512 --arg b=seq:65536
// @run --global 600 --local 8 --arg a=zeros:600 --arg b=seq:65536
// @expect splittable
__kernel void ushort_read(__global int *a, __global const int *b)
{
    int i = get_global_id(0);
    a[i] = b[(ushort)(i + 65530)];
}

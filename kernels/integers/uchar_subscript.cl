// A narrowing conversion in a write subscript. a[(uchar)i] for
// i >= 256 writes a[i mod 256]: modelled as a quasi-affine remainder, the
// writes of different slices may overlap. The parametric analysis does not
// split it; at a launch's global size the overlap stays, and the writes
// merge element by element with the run-time conflict check (here each
// element is written by one work-item: the split is exact).
// @run --global 512 --local 64 --arg a=zeros:512 --arg b=seq:512
// @run --global 504 --local 8 --arg a=zeros:504 --arg b=seq:504
// @expect splittable
__kernel void uchar_subscript(__global int *a, __global const int *b)
{
    int i = get_global_id(0);
    if (i >= 256)
        a[(uchar)i] = b[i];
}

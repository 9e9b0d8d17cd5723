// LU decomposition's scale step as public suites write it (PolyBench-ACC lu
// kernel 1): the work-items start at column k+1, `get_global_id(0) + (k + 1)`
// computed in size_t with the int scalar k converted to it, the sum then
// converted to int. Modelled without the wrap-around under launch-time
// assumptions that k + 1 is not negative and that no work-item's column
// leaves int, so the writes of row k are proved disjoint parametrically in k.
// @run --global 32 --local 8 --arg a=rand:1024:1 --arg k=3 --arg n=32
// @run --global 24 --local 8 --arg a=rand:900:2 --arg k=0 --arg n=30
// @run --global 16 --local 4 --arg a=rand:900:3 --arg k=17 --arg n=30
// @expect splittable
// @float
__kernel void scalar_offset_lu_scale(__global float *a, int k, int n)
{
    int j = get_global_id(0) + (k + 1);
    if (j < n)
        a[k * n + j] = a[k * n + j] / a[k * n + k];
}

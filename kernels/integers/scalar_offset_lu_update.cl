// LU decomposition's trailing update as public suites write it (PolyBench-ACC
// lu kernel 2): row and column start at k+1, `get_global_id(d) + (k + 1)`
// computed in size_t with the int scalar k converted to it, each sum then
// converted to int. Modelled without the wrap-around under launch-time
// assumptions over k and the NDRange, so the writes below and right of the
// pivot are proved disjoint parametrically in k: one analysis serves every
// step of the factorization as its NDRange shrinks.
// @run --global 32,32 --local 8,8 --arg a=rand:1024:1 --arg k=3 --arg n=32
// @run --global 24,24 --local 8,4 --arg a=rand:900:2 --arg k=5 --arg n=30
// @run --global 8,12 --local 4,4 --arg a=rand:400:3 --arg k=0 --arg n=20
// @expect splittable
// @float
__kernel void scalar_offset_lu_update(__global float *a, int k, int n)
{
    int j = get_global_id(0) + (k + 1);
    int i = get_global_id(1) + (k + 1);
    if (i < n && j < n)
        a[i * n + j] = a[i * n + j] - a[i * n + k] * a[k * n + j];
}

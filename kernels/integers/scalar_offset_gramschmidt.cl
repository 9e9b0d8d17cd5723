// Gram-Schmidt's third kernel as PolyBench-ACC writes it: work-item j of
// step k handles column k+1+j (`get_global_id(0) + (k + 1)` computed in
// size_t with the int scalar k converted to it, then converted to int),
// projects it on q's column k into r's row k, then subtracts the projection
// from a's column. Modelled without the wrap-around under launch-time
// assumptions over k and the NDRange: each slice writes its own columns of
// a and its own elements of r's row k, proved disjoint parametrically in k.
// @run --global 32 --local 8 --arg a=rand:512:1 --arg r=zeros:256 --arg q=rand:512:2 --arg k=2 --arg ni=32 --arg nj=16
// @run --global 24 --local 8 --arg a=rand:420:3 --arg r=rand:400:4 --arg q=rand:420:5 --arg k=0 --arg ni=21 --arg nj=20
// @expect splittable
// @float
__kernel void scalar_offset_gramschmidt(__global float *a, __global float *r, __global float *q,
                                        int k, int ni, int nj)
{
    int j = get_global_id(0) + (k + 1);
    if (j < nj) {
        r[k * nj + j] = 0.0f;
        for (int i = 0; i < ni; i++)
            r[k * nj + j] += q[i * nj + k] * a[i * nj + j];
        for (int i = 0; i < ni; i++)
            a[i * nj + j] -= q[i * nj + k] * r[k * nj + j];
    }
}

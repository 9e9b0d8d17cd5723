// 2mm's second product as PolyBench/GPU writes it: D = beta*D + tmp*C, tmp
// ni x nj, C nj x nl, D ni x nl linearized, D accumulated in place; the
// counter declared before its loop.
// @run --global 64,32 --local 16,8 --arg tmp=rand:1536:1 --arg C=rand:3072:2 --arg D=rand:2048:3 --arg ni=32 --arg nj=48 --arg nl=64 --arg beta=0.5
// @run --global 40,32 --local 8,8 --arg tmp=rand:899:4 --arg C=rand:1147:5 --arg D=rand:1073:6 --arg ni=29 --arg nj=31 --arg nl=37 --arg beta=2
// @expect splittable
// @float
__kernel void mm2_accumulate(__global float *tmp, __global float *C,
                             __global float *D, int ni, int nj, int nl,
                             float beta)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if ((i < ni) && (j < nl)) {
        D[i * nl + j] *= beta;
        int k;
        for (k = 0; k < nj; k++)
            D[i * nl + j] += tmp[i * nj + k] * C[k * nl + j];
    }
}

// 2mm's first product as PolyBench/GPU writes it: tmp = alpha*A*B, A ni x
// nk, B nk x nj, tmp ni x nj linearized, tmp zeroed then accumulated in
// place; the counter declared before its loop. The second product reads
// tmp (`mm2_accumulate`).
// @run --global 64,32 --local 16,8 --arg tmp=zeros:2048 --arg A=rand:1536:1 --arg B=rand:3072:2 --arg ni=32 --arg nj=64 --arg nk=48 --arg alpha=1.5
// @run --global 40,32 --local 8,8 --arg tmp=rand:1073:3 --arg A=rand:899:4 --arg B=rand:1147:5 --arg ni=29 --arg nj=37 --arg nk=31 --arg alpha=-2
// @expect splittable
// @float
__kernel void mm2_product(__global float *tmp, __global float *A,
                          __global float *B, int ni, int nj, int nk,
                          float alpha)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if ((i < ni) && (j < nj)) {
        tmp[i * nj + j] = 0;
        int k;
        for (k = 0; k < nk; k++)
            tmp[i * nj + j] += alpha * A[i * nk + k] * B[k * nj + j];
    }
}

// PolyBench-ACC gemm: C = alpha*A*B + beta*C with A ni x nk, B nk x nj and
// C ni x nj, linearized as A[i*nk + k], B[k*nj + j], C[i*nj + j]; C is read,
// scaled and accumulated in place in global memory.
// @run --global 64,32 --local 16,8 --arg a=rand:1536:1 --arg b=rand:3072:2 --arg c=rand:2048:3 --arg alpha=1.5 --arg beta=0.5 --arg ni=32 --arg nj=64 --arg nk=48
// @run --global 40,32 --local 8,8 --arg a=rand:899:4 --arg b=rand:1147:5 --arg c=rand:1073:6 --arg alpha=-1 --arg beta=2 --arg ni=29 --arg nj=37 --arg nk=31
// @expect splittable
// @float
__kernel void gemm(__global const float *a, __global const float *b,
                   __global float *c, float alpha, float beta,
                   int ni, int nj, int nk)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if ((i < ni) && (j < nj)) {
        c[i * nj + j] *= beta;
        for (int k = 0; k < nk; k++)
            c[i * nj + j] += alpha * a[i * nk + k] * b[k * nj + j];
    }
}

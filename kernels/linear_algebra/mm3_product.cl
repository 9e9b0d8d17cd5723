// One product of 3mm as PolyBench/GPU writes it (E = A*B, F = C*D and
// G = E*F are the same kernel over other sizes): E = A*B, A ni x nk, B nk x
// nj, E ni x nj linearized, E zeroed then accumulated in place; the counter
// declared before its loop.
// @run --global 64,32 --local 16,8 --arg A=rand:1536:1 --arg B=rand:3072:2 --arg E=zeros:2048 --arg ni=32 --arg nj=64 --arg nk=48
// @run --global 40,32 --local 8,8 --arg A=rand:899:4 --arg B=rand:1147:5 --arg E=rand:1073:6 --arg ni=29 --arg nj=37 --arg nk=31
// @expect splittable
// @float
__kernel void mm3_product(__global float *A, __global float *B,
                          __global float *E, int ni, int nj, int nk)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if ((i < ni) && (j < nj)) {
        int k;
        E[i * nj + j] = 0;
        for (k = 0; k < nk; k++)
            E[i * nj + j] += A[i * nk + k] * B[k * nj + j];
    }
}

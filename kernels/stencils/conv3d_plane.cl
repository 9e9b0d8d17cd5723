// 3-D convolution as PolyBench/GPU writes it: a 2-D NDRange over plane i
// (a scalar argument) of an ni x nj x nk volume, B[i][j][k] from eleven
// neighbours of A in planes i-1, i and i+1 (interior), 0 elsewhere in the
// plane; subscripts linearized over the product nk*nj.
// @run --global 32,16 --local 8,8 --arg A=rand:4096:1 --arg B=zeros:4096 --arg ni=8 --arg nj=16 --arg nk=32 --arg i=3
// @run --global 24,21 --local 8,7 --arg A=rand:3528:2 --arg B=rand:3528:3 --arg ni=7 --arg nj=21 --arg nk=24 --arg i=5
// @expect splittable
// @float
__kernel void conv3d_plane(__global float *A, __global float *B,
                           int ni, int nj, int nk, int i)
{
    int k = get_global_id(0);
    int j = get_global_id(1);
    float c11 = +2, c21 = +5, c31 = -8;
    float c12 = -3, c22 = +6, c32 = -9;
    float c13 = +4, c23 = +7, c33 = +10;
    if ((i < (ni - 1)) && (j < (nj - 1)) && (k < (nk - 1)) && (i > 0) && (j > 0) && (k > 0)) {
        B[i * (nk * nj) + j * nk + k] =
              c11 * A[(i - 1) * (nk * nj) + (j - 1) * nk + (k - 1)] + c13 * A[(i + 1) * (nk * nj) + (j - 1) * nk + (k - 1)]
            + c21 * A[(i - 1) * (nk * nj) + (j - 1) * nk + (k - 1)] + c23 * A[(i + 1) * (nk * nj) + (j - 1) * nk + (k - 1)]
            + c31 * A[(i - 1) * (nk * nj) + (j - 1) * nk + (k - 1)] + c33 * A[(i + 1) * (nk * nj) + (j - 1) * nk + (k - 1)]
            + c12 * A[(i + 0) * (nk * nj) + (j - 1) * nk + (k + 0)] + c22 * A[(i + 0) * (nk * nj) + (j + 0) * nk + (k + 0)]
            + c32 * A[(i + 0) * (nk * nj) + (j + 1) * nk + (k + 0)] + c11 * A[(i - 1) * (nk * nj) + (j - 1) * nk + (k + 1)]
            + c13 * A[(i + 1) * (nk * nj) + (j - 1) * nk + (k + 1)] + c21 * A[(i - 1) * (nk * nj) + (j + 0) * nk + (k + 1)]
            + c23 * A[(i + 1) * (nk * nj) + (j + 0) * nk + (k + 1)] + c31 * A[(i - 1) * (nk * nj) + (j + 1) * nk + (k + 1)]
            + c33 * A[(i + 1) * (nk * nj) + (j + 1) * nk + (k + 1)];
    } else {
        B[i * (nk * nj) + j * nk + k] = 0;
    }
}

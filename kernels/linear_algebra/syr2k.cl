// syr2k as PolyBench/GPU writes it: C = alpha*A*B^T + alpha*B*A^T + beta*C,
// A and B n x m, C n x n linearized; each work-item reads rows i and j of
// both A and B; the counter declared before its loop.
// @run --global 32,32 --local 16,8 --arg a=rand:1536:1 --arg b=rand:1536:2 --arg c=rand:1024:3 --arg alpha=1.5 --arg beta=0.5 --arg m=48 --arg n=32
// @run --global 32,32 --local 8,8 --arg a=rand:899:4 --arg b=rand:899:5 --arg c=rand:841:6 --arg alpha=-1 --arg beta=2 --arg m=31 --arg n=29
// @expect splittable
// @float
__kernel void syr2k(__global float *a, __global float *b, __global float *c,
                    float alpha, float beta, int m, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if ((i < n) && (j < n)) {
        c[i * n + j] *= beta;
        int k;
        for (k = 0; k < m; k++)
            c[i * n + j] += alpha * a[i * m + k] * b[j * m + k]
                          + alpha * b[i * m + k] * a[j * m + k];
    }
}

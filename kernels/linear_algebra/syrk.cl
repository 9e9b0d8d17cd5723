// syrk as PolyBench/GPU writes it: C = alpha*A*A^T + beta*C, A n x m, C n x
// n linearized; each work-item reads two rows of A (its own row i and row
// j); the counter declared before its loop.
// @run --global 32,32 --local 16,8 --arg alpha=1.5 --arg beta=0.5 --arg a=rand:1536:1 --arg c=rand:1024:2 --arg m=48 --arg n=32
// @run --global 32,32 --local 8,8 --arg alpha=-1 --arg beta=2 --arg a=rand:899:3 --arg c=rand:841:4 --arg m=31 --arg n=29
// @expect splittable
// @float
__kernel void syrk(float alpha, float beta, __global float *a,
                   __global float *c, int m, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if ((i < n) && (j < n)) {
        c[i * n + j] *= beta;
        int k;
        for (k = 0; k < m; k++)
            c[i * n + j] += alpha * a[i * m + k] * a[j * m + k];
    }
}

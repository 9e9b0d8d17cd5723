// Guarded scaling y[i] = alpha * x[i] for i < n, with the global size rounded
// up beyond n: the guard bounds every access to [0, n).
// @run --global 1024 --local 64 --arg y=zeros:1000 --arg x=rand:1000:1 --arg alpha=2.5 --arg n=1000
// @run --global 512 --local 16 --arg y=zeros:500 --arg x=rand:500:2 --arg alpha=-0.75 --arg n=500
// @run --global 64 --local 64 --arg y=zeros:1 --arg x=rand:1:3 --arg alpha=3 --arg n=1
// @expect splittable
__kernel void guarded_scale(__global float *y, __global const float *x,
                            float alpha, int n)
{
    int i = get_global_id(0);
    if (i < n)
        y[i] = alpha * x[i];
}

// A column sweep as tiled linear-algebra kernels write it: the pointer
// argument itself moved to the work-item's column (`A += c`), then stepped
// by the leading dimension in the loop (`A += lda`), reading `A[0]` and
// `A[1]`. The analysis follows the stepped pointer as an induction
// variable; the guard checks each access against the argument's value at
// the kernel's start.
// @run --global 64 --local 16 --arg A=rand:2112:1 --arg lda=64 --arg out=zeros:64 --arg n=32
// @run --global 48 --local 8 --arg A=rand:1250:2 --arg lda=50 --arg out=rand:48:3 --arg n=24
// @expect splittable
// @float
__kernel void pointer_stepped(__global const float *A, int lda, __global float *out, int n)
{
    int c = get_global_id(0);
    A += c;
    float s = 0.0f;
    for (int i = 0; i < n; i++) {
        s += A[0] * 0.5f + A[1];
        A += lda;
    }
    out[c] = s;
}

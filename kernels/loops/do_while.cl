// `do ... while` (five kernels of the public suites). Analyzed as
// a loop over j counted from its start whose first iteration runs whatever
// the condition says: `b` is read over b[i .. i + max(taps, 1) - 1].
// @run --global 1024 --local 64 --arg a=zeros:1024 --arg b=rand:1030:1 --arg taps=4
// @run --global 512 --local 32 --arg a=zeros:512 --arg b=rand:520:2 --arg taps=7
// @expect splittable
// @float
__kernel void do_while(__global float *a, __global const float *b, int taps)
{
    int i = get_global_id(0);
    int j = 0;
    float s = 0.0f;
    do {
        s += b[i + j];
        j++;
    } while (j < taps);
    a[i] = s;
}

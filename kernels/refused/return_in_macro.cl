// The guarantee: a `return` written inside a macro. The guard flushes its
// flags around every `return` by wrapping the statement's text in braces;
// the statement's span was the macro's use, so the braces went around the
// next statement instead and the inner `v` fell out of scope: every split
// launch wrote the outer `v` to `b` (a wrong result, with or without the
// guard). A return inside a macro expansion now makes the kernel
// unsplittable, with its location; it runs whole.
// @run --global 256 --local 32 --arg a=rand:256:1 --arg b=zeros:256 --arg n=250
// @run --global 64 --local 16 --arg a=rand:64:2 --arg b=zeros:64 --arg n=64
// @expect not-splittable
// @float
#define STOP_PAST_END if (i >= n) return;

__kernel void return_in_macro(__global const float *a, __global float *b, int n)
{
    int i = get_global_id(0);
    float v = 1.0f;
    {
        STOP_PAST_END
        float v = a[i];
        b[i] = v;
    }
}

// The guarantee: a `{` in a comment between the parameter list and the
// body. The rewrite took the first `{` after the parameters as the body's
// and put the guard's set-up inside the comment: every split build failed.
// The body's start is now libclang's (`Function::body_at`).
// @run --global 256 --local 32 --arg a=rand:256:1 --arg b=zeros:256 --arg n=250
// @run --global 48 --local 8 --arg a=rand:48:2 --arg b=zeros:48 --arg n=48
// @expect splittable
// @float
__kernel void brace_in_comment(__global const float *a, __global float *b, int n) /* { */
{
    int i = get_global_id(0);
    if (i < n)
        b[i] = a[i] + 1.0f;
}

// Bad input: valid OpenCL C 1.2 (clang accepts it) but uses goto, which the
// coarsener does not support. Expected: rejected as unsupported, with the
// location of the goto.
__kernel void uses_goto(__global const float *a, __global float *b, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        goto done;
    b[i] = 2.0f * a[i];
done:
    return;
}

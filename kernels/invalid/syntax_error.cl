// Bad input: a missing semicolon after the declaration of i (line 5), so the
// kernel does not parse. Expected: rejected with a file:line:col diagnostic.
__kernel void syntax_error(__global const float *a, __global float *b)
{
    int i = get_global_id(0)
    b[i] = a[i];
}

// Loop-carried index variables, stepped once per iteration by a
// loop-invariant amount (`idx += w`, `j++`), as real kernels walk a column
// of a table or a run of elements. Such a variable is its value at the
// loop's entry plus the iteration count times its step, so the subscripts
// stay affine: `a[k*w + i]` delinearizes into `a[k][i]` (a box per slice)
// and `b[4*i + t]` is a run per work-item.
// @run --global 64 --local 16 --arg out=zeros:64 --arg a=rand:256:1 --arg b=rand:256:2 --arg w=64 --arg taps=4
// @run --global 48 --local 8 --arg out=zeros:48 --arg a=rand:144:3 --arg b=rand:192:4 --arg w=48 --arg taps=3
// @expect splittable
// @float
__kernel void induction(__global float *out, __global const float *a,
                        __global const float *b, int w, int taps)
{
    int i = get_global_id(0);
    int idx = i;
    float s = 0.0f;
    for (int k = 0; k < taps; k++) {
        s += a[idx];
        idx += w;
    }
    int j = 4 * i;
    for (int t = 0; t < 4; t++) {
        s += 0.5f * b[j];
        j++;
    }
    out[i] = s;
}

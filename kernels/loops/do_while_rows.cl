// A `do ... while` writing: each work-item scales its row of w
// elements, and at least its first element when w < 1 (a do-while's first
// iteration runs whatever its condition says). Counted as a loop over j
// whose first iteration is unconditional: must-writes, exact, split by rows.
// @run --global 256 --local 32 --arg out=zeros:1024 --arg in=rand:1024:3 --arg w=4
// @run --global 128 --local 16 --arg out=zeros:128 --arg in=rand:128:4 --arg w=1
// @expect splittable
// @float
__kernel void do_while_rows(__global float *out, __global const float *in, int w)
{
    int i = get_global_id(0);
    int j = 0;
    do {
        out[i * w + j] = 2.0f * in[i * w + j];
        j++;
    } while (j < w);
}

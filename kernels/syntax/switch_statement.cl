// `switch`, as real kernels use it to pick an operation per
// launch (a scalar argument) or per element. Analyzed as an `if`/`else if`
// chain over a temporary holding the condition, which is its meaning when no
// case falls through into the next (the only form accepted). Both switches
// here split: `in` is read at i .. i+2 whatever the case.
// @run --global 1024 --local 64 --arg out=zeros:1024 --arg in=rand:1026:3 --arg mode=1
// @run --global 512 --local 32 --arg out=zeros:512 --arg in=rand:514:4 --arg mode=2
// @run --global 256 --local 16 --arg out=zeros:256 --arg in=rand:258:5 --arg mode=7
// @expect splittable
// @float
__kernel void switch_statement(__global float *out, __global const float *in, int mode)
{
    int i = get_global_id(0);
    float v = 0.0f;
    switch (i % 3) {
    case 0:
        v = in[i];
        break;
    case 1:
    case 2: {
        float t = in[i + 1];
        v = t * 0.5f;
        break;
    }
    }
    switch (mode) {
    case 1:
        out[i] = v + in[i + 2];
        break;
    case 2:
        out[i] = v - in[i + 2];
        return;
    default:
        out[i] = v;
    }
}

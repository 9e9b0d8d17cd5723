// 1-D convolution with a __constant filter of 2*radius + 1 taps and a run-time
// radius; neighbours outside [0, n) are skipped by a guard inside the loop.
// @run --global 1024 --local 64 --arg in=rand:1024:1 --arg filt=rand:7:2 --arg out=zeros:1024 --arg n=1024 --arg radius=3
// @run --global 1024 --local 32 --arg in=rand:997:3 --arg filt=rand:11:4 --arg out=zeros:997 --arg n=997 --arg radius=5
// @expect splittable
// @float
__kernel void conv1d(__global const float *in, __constant float *filt,
                     __global float *out, int n, int radius)
{
    int i = get_global_id(0);
    if (i < n) {
        float acc = 0.0f;
        for (int k = -radius; k <= radius; k++) {
            int j = i + k;
            if (j >= 0 && j < n)
                acc += filt[k + radius] * in[j];
        }
        out[i] = acc;
    }
}

// A particle filter's likelihood, as such codes write it: a helper takes
// the frame, the particles' sample indices and the output together and
// sums over each particle's samples (the frame read through the indices,
// so whole). The guard checks the three buffers in one clone of the
// helper, each access against its own buffer's window.
// @run --global 256 --local 32 --arg frame=rand:4096:1 --arg ind=rand:4096:2 --arg like=zeros:256 --arg n=256 --arg per=16
// @run --global 200 --local 8 --arg frame=rand:1000:3 --arg ind=rand:1000:4 --arg like=rand:200:5 --arg n=190 --arg per=5
// @expect splittable
// @float
static void likelihood(__global const float *frame, __global const int *ind, __global float *like,
                       int k, int per)
{
    float s = 0.0f;
    for (int j = 0; j < per; j++) {
        float v = frame[ind[k * per + j]];
        s += (v - 0.25f) * (v - 0.25f) - (v - 0.75f) * (v - 0.75f);
    }
    like[k] = s / 50.0f;
}

__kernel void helper_likelihood(__global const float *frame, __global const int *ind,
                                __global float *like, int n, int per)
{
    int k = get_global_id(0);
    if (k < n)
        likelihood(frame, ind, like, k, per);
}

// A feature transpose as clustering codes write it: an unsigned work-item
// index and int loop counters and sizes, so `i * npoints + tid` and
// `tid * nfeatures + i` are computed in `uint`. Each is kept without its
// wrap-around under launch-time assumptions: the sizes are not negative
// and the sums, at the largest work-item and the loop's last iteration,
// stay within `uint`. Both arrays then have exact ranges.
// @run --global 256 --local 64 --arg feature=rand:2040:1 --arg feature_swap=zeros:2040 --arg npoints=255 --arg nfeatures=8
// @run --global 96 --local 16 --arg feature=rand:1000:2 --arg feature_swap=rand:1000:3 --arg npoints=100 --arg nfeatures=10
// @expect splittable
// @float
__kernel void uint_product_loop(__global const float *feature, __global float *feature_swap,
                                int npoints, int nfeatures)
{
    unsigned int tid = get_global_id(0);
    if (tid >= npoints)
        return;
    for (int i = 0; i < nfeatures; i++)
        feature_swap[i * npoints + tid] = feature[tid * nfeatures + i];
}

// One row of a run-time-width matrix, a[k*n + j] (the row scaling
// of an LU step): the product k*n of two scalars matches no variable's
// stride. Taking k as the stride would need 0 <= j < k, which never holds
// where j > k; the width n is the stride, with the launch-time assumption
// 0 <= k < n (the pivot a[k*n + k]), which holds wherever a work-item works.
// @run --global 256 --local 32 --arg a=rand:4096:1 --arg k=3 --arg n=256
// @run --global 200 --local 8 --arg a=rand:2500:2 --arg k=0 --arg n=50
// @expect splittable
// @float
__kernel void row_scale(__global float *a, int k, int n)
{
    int j = get_global_id(0);
    if (j > k && j < n)
        a[k * n + j] = a[k * n + j] / a[k * n + k];
}

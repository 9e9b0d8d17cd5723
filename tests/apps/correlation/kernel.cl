/* Correlation of the m columns of an n x m data matrix, in four kernels:
   column means (a reduction over rows), standard deviations, centring and
   scaling, and the m x m correlation matrix. */
__kernel void corr_mean(__global const float *data, __global float *mean, int m, int n)
{
    int j = get_global_id(0);
    if (j < m) {
        float s = 0.0f;
        for (int i = 0; i < n; i++)
            s += data[i * m + j];
        mean[j] = s / (float)n;
    }
}

__kernel void corr_std(__global const float *data, __global const float *mean,
                       __global float *stddev, int m, int n)
{
    int j = get_global_id(0);
    if (j < m) {
        float s = 0.0f;
        for (int i = 0; i < n; i++)
            s += (data[i * m + j] - mean[j]) * (data[i * m + j] - mean[j]);
        s = sqrt(s / (float)n);
        stddev[j] = s <= 0.1f ? 1.0f : s;
    }
}

__kernel void corr_reduce(__global float *data, __global const float *mean,
                          __global const float *stddev, int m, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i < n && j < m)
        data[i * m + j] = (data[i * m + j] - mean[j]) / (sqrt((float)n) * stddev[j]);
}

__kernel void corr_corr(__global const float *data, __global float *symmat, int m, int n)
{
    int j1 = get_global_id(0);
    if (j1 < m) {
        for (int j2 = 0; j2 < m; j2++) {
            float s = 0.0f;
            for (int i = 0; i < n; i++)
                s += data[i * m + j1] * data[i * m + j2];
            symmat[j1 * m + j2] = s;
        }
    }
}

// 1-D Jacobi, 3-point, one time step: the interior of `dst` becomes the
// average of each point of `src` and its two neighbours; dst[0] and
// dst[n-1] are not written (fixed boundary). The host ping-pongs two arrays,
// A -> B then B -> A, for T steps (`jacobi1d.ron`). The global size may be
// rounded up past n: work-items outside [1, n-1) do nothing.
__kernel void jacobi1d(__global const float *src, __global float *dst, int n)
{
    int i = get_global_id(0);
    if (i >= 1 && i < n - 1)
        dst[i] = 0.33333334f * (src[i - 1] + src[i] + src[i + 1]);
}

/* One FDTD-2D time step in three kernels over nx x ny fields. */
__kernel void fdtd_ey(__global float *ey, __global const float *hz, float fict, int nx, int ny)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i < nx && j < ny) {
        if (i == 0)
            ey[j] = fict;
        else
            ey[i * ny + j] = ey[i * ny + j] - 0.5f * (hz[i * ny + j] - hz[(i - 1) * ny + j]);
    }
}

__kernel void fdtd_ex(__global float *ex, __global const float *hz, int nx, int ny)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i < nx && j > 0 && j < ny)
        ex[i * ny + j] = ex[i * ny + j] - 0.5f * (hz[i * ny + j] - hz[i * ny + j - 1]);
}

__kernel void fdtd_hz(__global const float *ex, __global const float *ey, __global float *hz,
                      int nx, int ny)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i < nx - 1 && j < ny - 1)
        hz[i * ny + j] = hz[i * ny + j] - 0.7f * (ex[i * ny + j + 1] - ex[i * ny + j]
                                                  + ey[(i + 1) * ny + j] - ey[i * ny + j]);
}

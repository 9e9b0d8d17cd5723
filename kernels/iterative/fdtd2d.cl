// FDTD-2D (Yee scheme, TE mode) on nx x ny fields stored row-major with the
// run-time width ny. One time step t is three launches over the same
// NDRange (columns, rows):
//   fdtd2d_ey: row 0 of ey takes the source value fict[t]; the other rows
//              are updated from the difference of hz along i;
//   fdtd2d_ex: columns 1.. of ex are updated from the difference of hz
//              along j;
//   fdtd2d_hz: hz (all but the last row and column) is updated from the
//              curl of ex and ey.
// The host repeats the three for T steps with t = 0, 1, ... (`fdtd2d.ron`);
// fict holds one source value per step.
__kernel void fdtd2d_ey(__global const float *fict, __global float *ey,
                        __global const float *hz, int t, int nx, int ny)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i >= nx || j >= ny)
        return;
    int here = i * ny + j;
    if (i == 0)
        ey[here] = fict[t];
    else
        ey[here] = ey[here] - 0.5f * (hz[here] - hz[here - ny]);
}

__kernel void fdtd2d_ex(__global float *ex, __global const float *hz, int nx, int ny)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i < nx && j >= 1 && j < ny) {
        int here = i * ny + j;
        ex[here] = ex[here] - 0.5f * (hz[here] - hz[here - 1]);
    }
}

__kernel void fdtd2d_hz(__global const float *ex, __global const float *ey,
                        __global float *hz, int nx, int ny)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i < nx - 1 && j < ny - 1) {
        int here = i * ny + j;
        hz[here] = hz[here] - 0.7f * (ex[here + 1] - ex[here]
                                      + ey[here + ny] - ey[here]);
    }
}

// 3-D 7-point stencil on an nx x ny x nz grid with run-time sizes. Only
// interior points are written: the border of out keeps its initial values, so
// out starts random to catch a glue that overwrites unwritten elements.
// @run --global 16,16,8 --local 4,4,2 --arg in=rand:2048:1 --arg out=rand:2048:2 --arg nx=16 --arg ny=16 --arg nz=8
// @run --global 12,10,9 --local 4,5,3 --arg in=rand:693:3 --arg out=rand:693:4 --arg nx=11 --arg ny=9 --arg nz=7
// @expect splittable
// @float
__kernel void stencil3d(__global const float *in, __global float *out,
                        int nx, int ny, int nz)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    int z = get_global_id(2);
    if (x >= 1 && x < nx - 1 && y >= 1 && y < ny - 1 && z >= 1 && z < nz - 1) {
        int idx = (z * ny + y) * nx + x;
        out[idx] = 0.4f * in[idx]
                   + 0.1f * (in[idx - 1] + in[idx + 1]
                             + in[idx - nx] + in[idx + nx]
                             + in[idx - nx * ny] + in[idx + nx * ny]);
    }
}

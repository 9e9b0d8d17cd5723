// 3-D 7-point Jacobi step with run-time coefficients on an
// nx x ny x nz grid, each neighbour subscript written out in full; only the
// interior is written (out starts random): a 3-D write box.
// @run --global 16,16,8 --local 8,4,2 --arg in=rand:2048:1 --arg out=rand:2048:2 --arg nx=16 --arg ny=16 --arg nz=8 --arg c0=0.5 --arg c1=0.125
// @run --global 12,10,9 --local 4,5,3 --arg in=rand:693:3 --arg out=rand:693:4 --arg nx=11 --arg ny=9 --arg nz=7 --arg c0=-1 --arg c1=0.25
// @expect splittable
// @float
__kernel void stencil7_interior(__global const float *in, __global float *out,
                                int nx, int ny, int nz, float c0, float c1)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    int z = get_global_id(2);
    if (x > 0 && x < nx - 1 && y > 0 && y < ny - 1 && z > 0 && z < nz - 1) {
        out[(z * ny + y) * nx + x] = c0 * in[(z * ny + y) * nx + x]
            + c1 * (in[(z * ny + y) * nx + x - 1] + in[(z * ny + y) * nx + x + 1]
                    + in[(z * ny + y - 1) * nx + x] + in[(z * ny + y + 1) * nx + x]
                    + in[((z - 1) * ny + y) * nx + x] + in[((z + 1) * ny + y) * nx + x]);
    }
}

// One plane z of a 3-D heat-equation step, the plane a scalar argument (a
// host launches it once per plane): out[z*nx*ny + y*nx + x] from the
// seven-point neighbourhood in `in`, the plane's offset a product of three
// parameters with no variable beside it. Delinearized as [z][y][x], the
// split moves the rows of three planes, not the volume.
// @run --global 16,8 --local 8,4 --arg in=rand:1280:1 --arg out=zeros:1280 --arg nx=16 --arg ny=8 --arg nz=10 --arg z=4
// @run --global 12,9 --local 4,3 --arg in=rand:756:2 --arg out=rand:756:3 --arg nx=12 --arg ny=9 --arg nz=7 --arg z=1
// @expect splittable
// @float
__kernel void heat3d_plane(__global const float *in, __global float *out,
                           int nx, int ny, int nz, int z)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x > 0 && x < nx - 1 && y > 0 && y < ny - 1 && z > 0 && z < nz - 1) {
        int c = z * nx * ny + y * nx + x;
        out[c] = 0.4f * in[c]
               + 0.1f * (in[c - 1] + in[c + 1] + in[c - nx] + in[c + nx]
                         + in[(z - 1) * nx * ny + y * nx + x]
                         + in[(z + 1) * nx * ny + y * nx + x]);
    }
}

// 3-D 27-point box stencil over a 3-D NDRange with nested neighbour loops
// (dz, dy, dx in -1..1) and a run-time grid size; interior points only, so
// out starts random. Three nested loops around one linearized subscript.
// @run --global 8,8,8 --local 4,4,2 --arg in=rand:512:1 --arg out=rand:512:2 --arg nx=8 --arg ny=8 --arg nz=8
// @run --global 9,6,6 --local 3,3,2 --arg in=rand:324:3 --arg out=rand:324:4 --arg nx=9 --arg ny=6 --arg nz=6
// @expect splittable
// @float
__kernel void stencil3d_27pt(__global const float *in, __global float *out, int nx, int ny, int nz)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    int z = get_global_id(2);
    if (x >= 1 && x < nx - 1 && y >= 1 && y < ny - 1 && z >= 1 && z < nz - 1) {
        float s = 0.0f;
        for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++)
                    s += in[((z + dz) * ny + (y + dy)) * nx + (x + dx)];
        out[(z * ny + y) * nx + x] = s / 27.0f;
    }
}

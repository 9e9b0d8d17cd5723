// 3-D 7-point stencil marching along z (the register-blocking form of 3-D
// stencil codes): a 2-D NDRange over (x, y); each work-item walks its column
// z = 1 .. nz-2 and writes interior points. Linearized (z*ny + y)*nx + x
// subscripts with three run-time sizes and a loop with a run-time bound.
// @run --global 16,16 --local 8,4 --arg in=rand:2048:1 --arg out=rand:2048:2 --arg nx=16 --arg ny=16 --arg nz=8
// @run --global 12,10 --local 4,5 --arg in=rand:693:3 --arg out=rand:693:4 --arg nx=11 --arg ny=9 --arg nz=7
// @expect splittable
// @float
__kernel void stencil3d_zmarch(__global const float *in, __global float *out, int nx, int ny, int nz)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= 1 && x < nx - 1 && y >= 1 && y < ny - 1) {
        int plane = nx * ny;
        for (int z = 1; z < nz - 1; z++) {
            int idx = z * plane + y * nx + x;
            out[idx] = 0.4f * in[idx]
                       + 0.1f * (in[idx - 1] + in[idx + 1] + in[idx - nx] + in[idx + nx]
                                 + in[idx - plane] + in[idx + plane]);
        }
    }
}

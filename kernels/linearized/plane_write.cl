// Plane write. A 2-D NDRange writes plane z (a scalar) of an
// nx x ny x nz volume, v[(z*ny + y)*nx + x] = s * img[y*nx + x]; the other
// planes keep their values (v starts random). The write box is one plane.
// @run --global 32,16 --local 8,8 --arg v=rand:4096:1 --arg img=rand:512:2 --arg nx=32 --arg ny=16 --arg z=3 --arg s=2
// @run --global 24,21 --local 8,7 --arg v=rand:2499:3 --arg img=rand:357:4 --arg nx=21 --arg ny=17 --arg z=6 --arg s=-0.5
// @expect splittable
// @float
__kernel void plane_write(__global float *v, __global const float *img,
                          int nx, int ny, int z, float s)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < nx && y < ny)
        v[(z * ny + y) * nx + x] = s * img[y * nx + x];
}

/* A 3-D grid filled inside its border, launched with a global offset of
   (1, 1, 1); and a 1-D update read from it into another buffer. */
__kernel void fill3d(__global float *g, int nx, int ny)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    int z = get_global_id(2);
    g[(z * ny + y) * nx + x] = 0.25f * (float)x - 0.5f * (float)y + (float)z;
}

__kernel void axpy_from(__global const float *src, __global float *dst, float a, int n)
{
    int i = get_global_id(0);
    if (i < n)
        dst[i] = a * src[i] + dst[i];
}

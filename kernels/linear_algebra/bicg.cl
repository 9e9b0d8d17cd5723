// PolyBench-ACC bicg kernel 2: s[j] = sum_i r[i] * A[i*ny + j], a column-wise
// walk over an nx x ny matrix (each slice along j reads a strided set of A
// spanning all rows), accumulated in place in s.
// @run --global 64 --local 16 --arg A=rand:3072:1 --arg r=rand:48:2 --arg s=zeros:64 --arg nx=48 --arg ny=64
// @run --global 64 --local 8 --arg A=rand:1147:3 --arg r=rand:31:4 --arg s=zeros:37 --arg nx=31 --arg ny=37
// @expect splittable
// @float
__kernel void bicg(__global const float *A, __global const float *r,
                   __global float *s, int nx, int ny)
{
    int j = get_global_id(0);
    if (j < ny) {
        s[j] = 0.0f;
        for (int i = 0; i < nx; i++)
            s[j] += r[i] * A[i * ny + j];
    }
}

// A matrix-vector product as SDK samples write it: each work-item takes a
// pointer to its row (`row = m + r * n`) and one to its output element
// (`&y[r]`), reads the row through the first and writes through the
// second. The guard checks each access through such a pointer as the
// buffer's element its address names.
// @run --global 64 --local 8 --arg m=rand:2048:1 --arg x=rand:32:2 --arg y=zeros:64 --arg n=32
// @run --global 40 --local 8 --arg m=rand:1000:3 --arg x=rand:25:4 --arg y=rand:40:5 --arg n=25
// @expect splittable
// @float
__kernel void pointer_into_buffer(__global const float *m, __global const float *x,
                                  __global float *y, int n)
{
    int r = get_global_id(0);
    __global const float *row = m + r * n;
    __global float *out = &y[r];
    float s = 0.0f;
    for (int j = 0; j < n; j++)
        s += row[j] * x[j];
    *out = s;
}

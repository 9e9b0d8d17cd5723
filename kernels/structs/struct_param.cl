// A struct passed by value (the parameters of a launch gathered
// in one argument, as SDK hosts do), given on the command line as its
// bytes. The kernel never changes `p`, so its integer members are
// parameters read from the argument's bytes at launch: the guard on `p.n`
// keeps the write a must-write, and `z`, read through `p.shift`, has its
// range (it went whole, and `out` was a may-write, before members were
// followed).
// @run --global 1024 --local 64 --arg x=rand:1024:1 --arg y=rand:1024:2 --arg z=rand:64:3 --arg out=zeros:1024 --arg p=bytes:0000c03f000080bee803000005000000
// @run --global 1000 --local 8 --arg x=rand:1000:4 --arg y=rand:1000:5 --arg z=rand:40:6 --arg out=zeros:1000 --arg p=bytes:0000003f00000040ee02000011000000
// @expect splittable
typedef struct {
    float alpha;
    float beta;
    int n;
    int shift;
} axpby_t;

__kernel void struct_param(__global const float *x, __global const float *y,
                           __global const float *z, __global float *out,
                           axpby_t p)
{
    int i = get_global_id(0);
    if (i < p.n)
        out[i] = p.alpha * x[i] + p.beta * y[i] + z[(i + p.shift) % 32];
}

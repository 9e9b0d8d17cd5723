// A private struct whose integer fields are subscripts: the analysis does
// not follow values through struct fields, so both arrays are whole (with
// the location of the first member read) and the written one merges
// element by element with the run-time conflict check. The split is
// still exact: the runs write each element from one work-item.
// @run --global 1024 --local 64 --arg in=rand:1024:1 --arg out=zeros:1024 --arg w=32 --arg n=1024
// @run --global 1000 --local 8 --arg in=rand:1000:2 --arg out=rand:1000:3 --arg w=25 --arg n=990
// @float
// @expect splittable whole=in,out
typedef struct { int row; int col; float w; } CELL;

inline void locate(int g, int w, __private CELL *c)
{
    c->row = g / w;
    c->col = g % w;
    c->w = 0.5f;
}

__kernel void struct_private_subscript(__global const float *in, __global float *out,
                                       int w, int n)
{
    int g = get_global_id(0);
    CELL c;
    locate(g, w, &c);
    CELL d = c;
    d.col = d.col + 1;
    if (g < n)
        out[c.row * w + c.col] = in[d.row * w + d.col - 1] * c.w;
}

// A 2-D five-point smoothing written through subscript macros, as image
// codes write them: IN(r, c) and OUT(r, c) over row-major images of width
// w, the centre through an object-like macro. Each expansion is checked by
// the guard at its site.
// @run --global 32,16 --local 8,4 --arg in=rand:512:1 --arg out=zeros:512 --arg w=32 --arg h=16
// @run --global 24,12 --local 8,3 --arg in=rand:288:2 --arg out=rand:288:3 --arg w=24 --arg h=12
// @expect splittable
// @float
#define IN(r, c) in[(r) * w + (c)]
#define OUT(r, c) out[(r) * w + (c)]
#define CENTER in[y * w + x]

__kernel void macro_subscript_stencil(__global const float *in, __global float *out, int w, int h)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x > 0 && y > 0 && x < w - 1 && y < h - 1)
        OUT(y, x) = 0.5f * CENTER + 0.125f * (IN(y - 1, x) + IN(y + 1, x) + IN(y, x - 1) + IN(y, x + 1));
    else
        OUT(y, x) = CENTER;
}

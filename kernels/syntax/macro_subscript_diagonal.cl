// One anti-diagonal d of a Needleman-Wunsch-style score matrix (cols x
// cols, row and column 0 fixed): each work-item scores one cell from its
// three neighbours, every access of the matrix through the subscript macro
// SCORE as such codes write it. The macro's whole body is the subscript,
// so the guard checks each expansion at its site.
// @run --global 64 --local 16 --arg score=rand:4225:1 --arg match=rand:4225:2 --arg cols=65 --arg d=40 --arg penalty=2
// @run --global 48 --local 8 --arg score=rand:2401:3 --arg match=rand:2401:4 --arg cols=49 --arg d=70 --arg penalty=1
// @expect splittable
#define SCORE(r, c) score[(r) * cols + (c)]

__kernel void macro_subscript_diagonal(__global int *score, __global const int *match,
                                       int cols, int d, int penalty)
{
    int i = get_global_id(0) + 1;
    int j = d - i + 1;
    if (j < 1 || j >= cols || i >= cols)
        return;
    int up = SCORE(i - 1, j) - penalty;
    int left = SCORE(i, j - 1) - penalty;
    int diag = SCORE(i - 1, j - 1) + match[i * cols + j];
    SCORE(i, j) = max(diag, max(up, left));
}

/* One anti-diagonal d of a Needleman-Wunsch-style score matrix (cols x
   cols, row and column 0 fixed): each work-item scores one cell from its
   three neighbours, through a subscript macro as such codes write it. */
#define SCORE(r, c) score[(r) * cols + (c)]

__kernel void diagonal(__global int *score, __global const int *match, int cols, int d,
                       int penalty)
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

// correlation's main kernel as PolyBench/GPU writes it: for column j1 of
// the n x m data, symmat[j1][j2] = sum_i data[i][j1]*data[i][j2] for every
// j2 > j1, mirrored into symmat[j2][j1], and symmat[j1][j1] = 1; a
// triangular loop starting past the work-item's id, and counters declared
// before their loops.
// @run --global 64 --local 16 --arg symmat=zeros:4096 --arg data=rand:3072:1 --arg m=64 --arg n=48
// @run --global 40 --local 8 --arg symmat=rand:1369:2 --arg data=rand:1147:3 --arg m=37 --arg n=31
// @expect splittable
// @float
__kernel void correlation(__global float *symmat, __global float *data,
                          int m, int n)
{
    int j1 = get_global_id(0);
    int i, j2;
    if (j1 < (m - 1)) {
        symmat[j1 * m + j1] = 1.0f;
        for (j2 = (j1 + 1); j2 < m; j2++) {
            symmat[j1 * m + j2] = 0.0f;
            for (i = 0; i < n; i++)
                symmat[j1 * m + j2] += data[i * m + j1] * data[i * m + j2];
            symmat[j2 * m + j1] = symmat[j1 * m + j2];
        }
    }
}

/* coarsened by clpart from kernels/stencils/conv3d_plane.cl: kernel 'conv3d_plane' */
#include "clpart_coarsen.h"

void conv3d_plane(float * A, float * B, int ni, int nj, int nk, int i, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int k = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        int j = (int)(__wg->group_id[1] * __wg->local_size[1] + __lid1 + __wg->global_offset[1]);
        float c11 = (float)(+2);
        float c21 = (float)(+5);
        float c31 = (float)(-8);
        float c12 = (float)(-3);
        float c22 = (float)(+6);
        float c32 = (float)(-9);
        float c13 = (float)(+4);
        float c23 = (float)(+7);
        float c33 = (float)(+10);
        if ((((((i < (ni - 1)) && (j < (nj - 1))) && (k < (nk - 1))) && (i > 0)) && (j > 0)) && (k > 0)) {
            B[((i * (nk * nj)) + (j * nk)) + k] = (((((((((((((((c11 * A[(((i - 1) * (nk * nj)) + ((j - 1) * nk)) + (k - 1)]) + (c13 * A[(((i + 1) * (nk * nj)) + ((j - 1) * nk)) + (k - 1)])) + (c21 * A[(((i - 1) * (nk * nj)) + ((j - 1) * nk)) + (k - 1)])) + (c23 * A[(((i + 1) * (nk * nj)) + ((j - 1) * nk)) + (k - 1)])) + (c31 * A[(((i - 1) * (nk * nj)) + ((j - 1) * nk)) + (k - 1)])) + (c33 * A[(((i + 1) * (nk * nj)) + ((j - 1) * nk)) + (k - 1)])) + (c12 * A[(((i + 0) * (nk * nj)) + ((j - 1) * nk)) + (k + 0)])) + (c22 * A[(((i + 0) * (nk * nj)) + ((j + 0) * nk)) + (k + 0)])) + (c32 * A[(((i + 0) * (nk * nj)) + ((j + 1) * nk)) + (k + 0)])) + (c11 * A[(((i - 1) * (nk * nj)) + ((j - 1) * nk)) + (k + 1)])) + (c13 * A[(((i + 1) * (nk * nj)) + ((j - 1) * nk)) + (k + 1)])) + (c21 * A[(((i - 1) * (nk * nj)) + ((j + 0) * nk)) + (k + 1)])) + (c23 * A[(((i + 1) * (nk * nj)) + ((j + 0) * nk)) + (k + 1)])) + (c31 * A[(((i - 1) * (nk * nj)) + ((j + 1) * nk)) + (k + 1)])) + (c33 * A[(((i + 1) * (nk * nj)) + ((j + 1) * nk)) + (k + 1)]));
        } else {
            B[((i * (nk * nj)) + (j * nk)) + k] = ((float)0);
        }
        __clpart_next_wi_0: ;
    }
}

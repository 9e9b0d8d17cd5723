/* coarsened by clpart from kernels/linear_algebra/matmul_tiled_guarded.cl: kernel 'matmul_tiled_guarded' */
#include "clpart_coarsen.h"

void matmul_tiled_guarded(const float * a, const float * b, float * c, int m, int n, int k, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    float as[8][8];
    float bs[8][8];
    float acc[__n_wi];
    int col[__n_wi];
    int row[__n_wi];
    int tx[__n_wi];
    int ty[__n_wi];
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        tx[__wi] = (int)__lid0;
        ty[__wi] = (int)__lid1;
        col[__wi] = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        row[__wi] = (int)(__wg->group_id[1] * __wg->local_size[1] + __lid1 + __wg->global_offset[1]);
        acc[__wi] = 0.0f;
        __clpart_next_wi_0: ;
    }
    for (int t = 0; t < (((k + 8) - 1) / 8); t++) { /* work-group uniform */
        for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
        for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
        for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
            __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
            int ak = (t * 8) + tx[__wi];
            int bk = (t * 8) + ty[__wi];
            as[ty[__wi]][tx[__wi]] = (((row[__wi] < m) && (ak < k)) ? a[(row[__wi] * k) + ak] : 0.0f);
            bs[ty[__wi]][tx[__wi]] = (((bk < k) && (col[__wi] < n)) ? b[(bk * n) + col[__wi]] : 0.0f);
            __clpart_next_wi_1: ;
        }
        /* barrier */
        for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
        for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
        for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
            __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
            for (int i = 0; i < 8; i++) {
                acc[__wi] += (as[ty[__wi]][i] * bs[i][tx[__wi]]);
            }
            __clpart_next_wi_2: ;
        }
        /* barrier */
    }
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        if ((row[__wi] < m) && (col[__wi] < n)) {
            c[(row[__wi] * n) + col[__wi]] = acc[__wi];
        }
        __clpart_next_wi_3: ;
    }
}

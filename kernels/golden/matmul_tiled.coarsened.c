/* coarsened by clpart from kernels/linear_algebra/matmul_tiled.cl: kernel 'matmul_tiled' */
#include "clpart_coarsen.h"

void matmul_tiled(const float * a, const float * b, float * c, int width, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    float as[16][16];
    float bs[16][16];
    float acc[__n_wi];
    int tx[__n_wi];
    int ty[__n_wi];
    int x[__n_wi];
    int y[__n_wi];
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        tx[__wi] = (int)__lid0;
        ty[__wi] = (int)__lid1;
        x[__wi] = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        y[__wi] = (int)(__wg->group_id[1] * __wg->local_size[1] + __lid1 + __wg->global_offset[1]);
        acc[__wi] = 0.0f;
        __clpart_next_wi_0: ;
    }
    for (int t = 0; t < (width / 16); t++) { /* work-group uniform */
        for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
        for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
        for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
            __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
            as[ty[__wi]][tx[__wi]] = a[((y[__wi] * width) + (t * 16)) + tx[__wi]];
            bs[ty[__wi]][tx[__wi]] = b[(((t * 16) + ty[__wi]) * width) + x[__wi]];
            __clpart_next_wi_1: ;
        }
        /* barrier */
        for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
        for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
        for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
            __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
            for (int k = 0; k < 16; k++) {
                acc[__wi] += (as[ty[__wi]][k] * bs[k][tx[__wi]]);
            }
            __clpart_next_wi_2: ;
        }
        /* barrier */
    }
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        c[(y[__wi] * width) + x[__wi]] = acc[__wi];
        __clpart_next_wi_3: ;
    }
}

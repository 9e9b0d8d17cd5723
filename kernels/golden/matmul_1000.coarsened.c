/* coarsened by clpart from kernels/linear_algebra/matmul_1000.cl: kernel 'matmul_1000' */
#include "clpart_coarsen.h"

void matmul_1000(float * c, const float * a, const float * b, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int x = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        int y = (int)(__wg->group_id[1] * __wg->local_size[1] + __lid1 + __wg->global_offset[1]);
        float element = 0.0f;
        for (int i = 0; i < 1000; i++) {
            element += (a[i + (y * 1000)] * b[x + (i * 1000)]);
        }
        c[x + (y * 1000)] = element;
        __clpart_next_wi_0: ;
    }
}

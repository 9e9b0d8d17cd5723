/* coarsened by clpart from kernels/linear_algebra/matmul.cl: kernel 'matmul' */
#include "clpart_coarsen.h"

void matmul(float * c, const float * a, const float * b, int width, const clpart_wg *__wg)
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
        for (int i = 0; i < width; i++) {
            element += (a[(y * width) + i] * b[(i * width) + x]);
        }
        c[(y * width) + x] = element;
        __clpart_next_wi_0: ;
    }
}

/* coarsened by clpart from kernels/linear_algebra/fan1.cl: kernel 'fan1' */
#include "clpart_coarsen.h"

void fan1(float * m_dev, float * a_dev, float * b_dev, int size, int t, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int globalId = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        if (globalId < ((size - 1) - t)) {
            (*((m_dev + (size * ((globalId + t) + 1))) + t)) = ((*((a_dev + (size * ((globalId + t) + 1))) + t)) / (*((a_dev + (size * t)) + t)));
        }
        __clpart_next_wi_0: ;
    }
}

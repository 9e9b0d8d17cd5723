/* coarsened by clpart from kernels/linear_algebra/fan2.cl: kernel 'fan2' */
#include "clpart_coarsen.h"

void fan2(float * m_dev, float * a_dev, float * b_dev, int size, int t, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int globalIdx = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        int globalIdy = (int)(__wg->group_id[1] * __wg->local_size[1] + __lid1 + __wg->global_offset[1]);
        if ((globalIdx < ((size - 1) - t)) && (globalIdy < (size - t))) {
            a_dev[(size * ((globalIdx + 1) + t)) + (globalIdy + t)] -= (m_dev[(size * ((globalIdx + 1) + t)) + t] * a_dev[(size * t) + (globalIdy + t)]);
            if (globalIdy == 0) {
                b_dev[(globalIdx + 1) + t] -= (m_dev[(size * ((globalIdx + 1) + t)) + (globalIdy + t)] * b_dev[t]);
            }
        }
        __clpart_next_wi_0: ;
    }
}

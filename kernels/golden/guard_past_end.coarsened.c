/* coarsened by clpart from kernels/guard/guard_past_end.cl: kernel 'guard_past_end' */
#include "clpart_coarsen.h"

void guard_past_end(const float * a, float * b, int n, int m, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int i = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        if ((i + 1) < (n * m)) {
            b[i] = a[i + 1];
        }
        __clpart_next_wi_0: ;
    }
}

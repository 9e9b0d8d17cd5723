/* coarsened by clpart from kernels/syntax/name_in_body.cl: kernel 'name_in_body' */
#include "clpart_coarsen.h"

void name_in_body(const float * x, float * y, float a, int n, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int i = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        if (i < n) {
            float name_in_body = a * x[i];
            y[i] = (name_in_body + y[i]);
        }
        __clpart_next_wi_0: ;
    }
}

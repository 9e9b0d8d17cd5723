/* coarsened by clpart from kernels/refused/return_in_macro.cl: kernel 'return_in_macro' */
#include "clpart_coarsen.h"

void return_in_macro(const float * a, float * b, int n, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int i = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        float v = 1.0f;
        {
            if (i >= n) {
                goto __clpart_next_wi_0;
            }
            float v = a[i];
            b[i] = v;
        }
        __clpart_next_wi_0: ;
    }
}

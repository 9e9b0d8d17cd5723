/* coarsened by clpart from kernels/work_groups/histogram256_partial.cl: kernel 'histogram256_partial' */
#include "clpart_coarsen.h"

void histogram256_partial(const uchar * data, uint * partial, int chunk, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int g = (int)__wg->group_id[0];
        int lid = (int)__lid0;
        int ls = (int)__wg->local_size[0];
        for (int b = lid; b < 256; b += ls) {
            uint n = (uint)0;
            for (int i = 0; i < chunk; i++) {
                n += ((uint)((((int)data[(g * chunk) + i]) == b) ? 1 : 0));
            }
            partial[(g * 256) + b] = n;
        }
        __clpart_next_wi_0: ;
    }
}

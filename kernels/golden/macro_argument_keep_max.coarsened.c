/* coarsened by clpart from kernels/syntax/macro_argument_keep_max.cl: kernel 'macro_argument_keep_max' */
#include "clpart_coarsen.h"

void macro_argument_keep_max(const int * in, int * out, int n, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int x = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        if (x >= n) {
            goto __clpart_next_wi_0;
        }
        if (in[2 * x] > out[x]) {
            out[x] = in[2 * x];
        }
        if (in[(2 * x) + 1] > out[x]) {
            out[x] = in[(2 * x) + 1];
        }
        __clpart_next_wi_0: ;
    }
}

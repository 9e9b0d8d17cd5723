/* coarsened by clpart from kernels/work_groups/histogram256_merge.cl: kernel 'histogram256_merge' */
#include "clpart_coarsen.h"

void histogram256_merge(const uint * partial, uint * hist, int n_partials, uint * scratch, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    int bin[__n_wi];
    int lid[__n_wi];
    int ls[__n_wi];
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        bin[__wi] = (int)__wg->group_id[0];
        lid[__wi] = (int)__lid0;
        ls[__wi] = (int)__wg->local_size[0];
        uint sum = (uint)0;
        for (int p = lid[__wi]; p < n_partials; p += ls[__wi]) {
            sum += partial[(p * 256) + bin[__wi]];
        }
        scratch[lid[__wi]] = sum;
        __clpart_next_wi_0: ;
    }
    /* barrier */
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        if (lid[__wi] == 0) {
            uint total = (uint)0;
            for (int k = 0; k < ls[__wi]; k++) {
                total += scratch[k];
            }
            hist[bin[__wi]] = total;
        }
        __clpart_next_wi_1: ;
    }
}

/* coarsened by clpart from kernels/integers/uint_product_loop.cl: kernel 'uint_product_loop' */
#include "clpart_coarsen.h"

void uint_product_loop(const float * feature, float * feature_swap, int npoints, int nfeatures, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        uint tid = (uint)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        if (tid >= ((uint)npoints)) {
            goto __clpart_next_wi_0;
        }
        for (int i = 0; i < nfeatures; i++) {
            feature_swap[((uint)(i * npoints)) + tid] = feature[(tid * ((uint)nfeatures)) + ((uint)i)];
        }
        __clpart_next_wi_0: ;
    }
}

/* coarsened by clpart from kernels/linearized/bitonic_merge.cl: kernel 'bitonic_merge' */
#include "clpart_coarsen.h"

void bitonic_merge(int * data, int size, int stride, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int i = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        int pos = (((i / stride) * 2) * stride) + (i % stride);
        int up = ((pos / size) % 2) == 0;
        int a = data[pos];
        int b = data[pos + stride];
        if ((a > b) == up) {
            data[pos] = b;
            data[pos + stride] = a;
        }
        __clpart_next_wi_0: ;
    }
}

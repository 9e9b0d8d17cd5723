/* coarsened by clpart from kernels/loops/collatz.cl: kernel 'collatz' */
#include "clpart_coarsen.h"

void collatz(const uint * start, uint * steps, int n, const clpart_wg *__wg)
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
            uint v = start[i] + 1u;
            uint count = 0u;
            while ((v != 1u) && (count < 10000u)) {
                if ((v & 1u) != 0u) {
                    v = ((3u * v) + 1u);
                } else {
                    v = (v / 2u);
                }
                count++;
            }
            steps[i] = count;
        }
        __clpart_next_wi_0: ;
    }
}

/* coarsened by clpart from kernels/atomics/atomic_bitmask.cl: kernel 'atomic_bitmask' */
#include "clpart_coarsen.h"

void atomic_bitmask(const uint * data, uint * seen, uint * mask, uint * parity, int n, const clpart_wg *__wg)
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
            uint v = data[i];
            clpart_atomic_or(&seen[(v / ((uint)32)) % ((uint)32)], 1u << (v % ((uint)32)));
            clpart_atomic_and(&mask[i % 8], (~(1u << (v % ((uint)32)))) | 4026531840ul);
            clpart_atomic_xor(&parity[v % ((uint)8)], v * 2654435761ul);
        }
        __clpart_next_wi_0: ;
    }
}

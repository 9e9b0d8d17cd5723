/* coarsened by clpart from kernels/pointers/counter_through_pointer.cl: kernel 'counter_through_pointer' */
#include "clpart_coarsen.h"

static void bump(const clpart_wg *__wg, size_t __lid0, size_t __lid1, size_t __lid2, int * p)
{
    (void)__wg; (void)__lid0; (void)__lid1; (void)__lid2;
    (*p) += 1;
}

void counter_through_pointer(int * a, int n, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int i = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        for (int j = 0; j < n; j++) {
            a[(i * 16) + j] = 7;
            bump(__wg, __lid0, __lid1, __lid2, &j);
        }
        __clpart_next_wi_0: ;
    }
}

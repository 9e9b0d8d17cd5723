/* coarsened by clpart from kernels/atomics/atomic_ledger.cl: kernel 'atomic_ledger' */
#include "clpart_coarsen.h"

void atomic_ledger(const int * amount, const int * account, int * balance, uint * entries, long * total, int naccounts, int n, const clpart_wg *__wg)
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
            int a = amount[i];
            int k = account[i] % naccounts;
            if (a & 1) {
                clpart_atomic_sub(&balance[k], a);
            } else {
                clpart_atomic_add(&balance[k], a);
            }
            clpart_atomic_inc(&entries[k]);
            clpart_atom_add(&total[k], (((long)a) * 65536l) * 4096l);
        }
        __clpart_next_wi_0: ;
    }
}

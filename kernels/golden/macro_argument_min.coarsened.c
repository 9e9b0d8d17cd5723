/* coarsened by clpart from kernels/syntax/macro_argument_min.cl: kernel 'macro_argument_min' */
#include "clpart_coarsen.h"

void macro_argument_min(const int * cost, const int * row, int * out, int n, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int x = (int)(((__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]) >= ((ulong)0)) ? (__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]) : ((ulong)0));
        if (x >= n) {
            goto __clpart_next_wi_0;
        }
        int l = ((x - 1) >= 0) ? (x - 1) : 0;
        int r = ((x + 1) <= (n - 1)) ? (x + 1) : (n - 1);
        out[x] = (((row[l] <= ((row[x] <= row[r]) ? row[x] : row[r])) ? row[l] : ((row[x] <= row[r]) ? row[x] : row[r])) + cost[x]);
        __clpart_next_wi_0: ;
    }
}

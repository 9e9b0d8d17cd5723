/* coarsened by clpart from kernels/work_groups/group_tile.cl: kernel 'group_tile' */
#include "clpart_coarsen.h"

void group_tile(const float * in, float * out, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    float tile[16];
    int base[__n_wi];
    int lid[__n_wi];
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        base[__wi] = (int)(__wg->group_id[0] * ((ulong)16));
        lid[__wi] = (int)__lid0;
        tile[lid[__wi]] = in[base[__wi] + lid[__wi]];
        __clpart_next_wi_0: ;
    }
    /* barrier */
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        out[base[__wi] + lid[__wi]] = tile[(16 - 1) - lid[__wi]];
        __clpart_next_wi_1: ;
    }
}

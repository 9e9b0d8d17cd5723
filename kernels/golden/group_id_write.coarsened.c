/* coarsened by clpart from kernels/work_groups/group_id_write.cl: kernel 'group_id_write' */
#include "clpart_coarsen.h"

void group_id_write(const int * in, int * out, int * firsts, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int g = (int)__wg->group_id[0];
        int ng = (int)__wg->num_groups[0];
        int ls = (int)__wg->local_size[0];
        int lid = (int)__lid0;
        int i = (g * ls) + lid;
        out[(((ng - 1) - g) * ls) + lid] = (in[i] + ng);
        if (lid == 0) {
            firsts[g] = in[i];
        }
        __clpart_next_wi_0: ;
    }
}

/* coarsened by clpart from kernels/work_groups/reduce_sum.cl: kernel 'reduce_sum' */
#include "clpart_coarsen.h"

static int ilog2(const clpart_wg *__wg, size_t __lid0, size_t __lid1, size_t __lid2, int v)
{
    (void)__wg; (void)__lid0; (void)__lid1; (void)__lid2;
    int r = 0;
    for (int b = 1; b < 31; b++) {
        if ((v >> b) != 0) {
            r = b;
        }
    }
    return r;
}

void reduce_sum(const float * in, float * out, float * scratch, int n, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    int lid[__n_wi];
    int nlev[__n_wi];
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int gid = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        lid[__wi] = (int)__lid0;
        nlev[__wi] = ilog2(__wg, __lid0, __lid1, __lid2, (int)__wg->local_size[0]);
        scratch[lid[__wi]] = ((gid < n) ? in[gid] : 0.0f);
        __clpart_next_wi_0: ;
    }
    /* barrier */
    for (int lvl = nlev[0] - 1; lvl >= 0; lvl--) { /* work-group uniform */
        for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
        for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
        for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
            __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
            int s = 1 << lvl;
            if (lid[__wi] < s) {
                scratch[lid[__wi]] += scratch[lid[__wi] + s];
            }
            __clpart_next_wi_1: ;
        }
        /* barrier */
    }
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        if (lid[__wi] == 0) {
            out[__wg->group_id[0]] = scratch[0];
        }
        __clpart_next_wi_2: ;
    }
}

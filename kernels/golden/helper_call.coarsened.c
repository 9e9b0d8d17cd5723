/* coarsened by clpart from kernels/basics/helper_call.cl: kernel 'helper_call' */
#include "clpart_coarsen.h"

static float blend(const clpart_wg *__wg, size_t __lid0, size_t __lid1, size_t __lid2, float x, float y, float w)
{
    (void)__wg; (void)__lid0; (void)__lid1; (void)__lid2;
    return (x * (1.0f - w)) + (y * w);
}

static float pair_avg(const clpart_wg *__wg, size_t __lid0, size_t __lid1, size_t __lid2, const float * p, int i)
{
    (void)__wg; (void)__lid0; (void)__lid1; (void)__lid2;
    return 0.5f * (p[i] + p[i + 1]);
}

void helper_call(const float * a, const float * b, float * out, float w, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int i = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        out[i] = blend(__wg, __lid0, __lid1, __lid2, a[i], pair_avg(__wg, __lid0, __lid1, __lid2, b, i), w);
        __clpart_next_wi_0: ;
    }
}

/* coarsened by clpart from kernels/guard/helper_likelihood.cl: kernel 'helper_likelihood' */
#include "clpart_coarsen.h"

static void likelihood(const clpart_wg *__wg, size_t __lid0, size_t __lid1, size_t __lid2, const float * frame, const int * ind, float * like, int k, int per)
{
    (void)__wg; (void)__lid0; (void)__lid1; (void)__lid2;
    float s = 0.0f;
    for (int j = 0; j < per; j++) {
        float v = frame[ind[(k * per) + j]];
        s += (((v - 0.25f) * (v - 0.25f)) - ((v - 0.75f) * (v - 0.75f)));
    }
    like[k] = (s / 50.0f);
}

void helper_likelihood(const float * frame, const int * ind, float * like, int n, int per, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int k = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        if (k < n) {
            likelihood(__wg, __lid0, __lid1, __lid2, frame, ind, like, k, per);
        }
        __clpart_next_wi_0: ;
    }
}

/* coarsened by clpart from kernels/loops/induction.cl: kernel 'induction' */
#include "clpart_coarsen.h"

void induction(float * out, const float * a, const float * b, int w, int taps, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int i = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        int idx = i;
        float s = 0.0f;
        for (int k = 0; k < taps; k++) {
            s += a[idx];
            idx += w;
        }
        int j = 4 * i;
        for (int t = 0; t < 4; t++) {
            s += (0.5f * b[j]);
            j++;
        }
        out[i] = s;
        __clpart_next_wi_0: ;
    }
}

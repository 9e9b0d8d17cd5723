/* coarsened by clpart from kernels/syntax/switch_statement.cl: kernel 'switch_statement' */
#include "clpart_coarsen.h"

void switch_statement(float * out, const float * in, int mode, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int i = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        float v = 0.0f;
        {
            int clpart_switch_0 = i % 3;
            if (clpart_switch_0 == 0) {
                v = in[i];
            } else {
                if ((clpart_switch_0 == 1) || (clpart_switch_0 == 2)) {
                    {
                        float t = in[i + 1];
                        v = (t * 0.5f);
                    }
                }
            }
        }
        {
            int clpart_switch_1 = mode;
            if (clpart_switch_1 == 1) {
                out[i] = (v + in[i + 2]);
            } else {
                if (clpart_switch_1 == 2) {
                    out[i] = (v - in[i + 2]);
                    goto __clpart_next_wi_0;
                } else {
                    out[i] = v;
                }
            }
        }
        __clpart_next_wi_0: ;
    }
}

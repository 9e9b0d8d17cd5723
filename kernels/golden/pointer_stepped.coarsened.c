/* coarsened by clpart from kernels/pointers/pointer_stepped.cl: kernel 'pointer_stepped' */
#include "clpart_coarsen.h"

void pointer_stepped(const float * __clpart_param_A, int lda, float * out, int n, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        const float * A = __clpart_param_A;
        int c = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        A += c;
        float s = 0.0f;
        for (int i = 0; i < n; i++) {
            s += ((A[0] * 0.5f) + A[1]);
            A += lda;
        }
        out[c] = s;
        __clpart_next_wi_0: ;
    }
}

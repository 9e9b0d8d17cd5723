/* coarsened by clpart from kernels/linear_algebra/correlation.cl: kernel 'correlation' */
#include "clpart_coarsen.h"

void correlation(float * symmat, float * data, int m, int n, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int j1 = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        int i;
        int j2;
        if (j1 < (m - 1)) {
            symmat[(j1 * m) + j1] = 1.0f;
            for (j2 = (j1 + 1); j2 < m; j2++) {
                symmat[(j1 * m) + j2] = 0.0f;
                for (i = 0; i < n; i++) {
                    symmat[(j1 * m) + j2] += (data[(i * m) + j1] * data[(i * m) + j2]);
                }
                symmat[(j2 * m) + j1] = symmat[(j1 * m) + j2];
            }
        }
        __clpart_next_wi_0: ;
    }
}

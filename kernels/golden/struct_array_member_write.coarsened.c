/* coarsened by clpart from kernels/structs/struct_array_member_write.cl: kernel 'struct_array_member_write' */
#include "clpart_coarsen.h"

typedef struct {
    int count;
    float sums[4];
} bin_t;

void struct_array_member_write(const float * in, bin_t * bins, int n, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int i = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        if (i >= n) {
            goto __clpart_next_wi_0;
        }
        (bins[i]).count = 4;
        for (int k = 0; k < 4; k++) {
            (bins[i]).sums[k] = (in[(4 * i) + k] * ((float)(k + 1)));
        }
        __clpart_next_wi_0: ;
    }
}

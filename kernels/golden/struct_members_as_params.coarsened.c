/* coarsened by clpart from kernels/structs/struct_members_as_params.cl: kernel 'struct_members_as_params' */
#include "clpart_coarsen.h"

typedef struct {
    int width;
    int height;
    int radius;
    float scale;
} blur_params;

void struct_members_as_params(const float * in, float * out, blur_params p, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int x = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        int y = (int)(__wg->group_id[1] * __wg->local_size[1] + __lid1 + __wg->global_offset[1]);
        if ((x >= (p).width) || (y >= (p).height)) {
            goto __clpart_next_wi_0;
        }
        float s = 0.0f;
        for (int d = -(p).radius; d <= (p).radius; d++) {
            int yy = clpart_min(clpart_max(y + d, 0), (p).height - 1);
            s += in[(yy * (p).width) + x];
        }
        out[(y * (p).width) + x] = (s * (p).scale);
        __clpart_next_wi_0: ;
    }
}

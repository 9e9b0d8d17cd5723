/* coarsened by clpart from kernels/structs/struct_private_subscript.cl: kernel 'struct_private_subscript' */
#include "clpart_coarsen.h"

typedef struct { int row; int col; float w; } CELL;

static void locate(const clpart_wg *__wg, size_t __lid0, size_t __lid1, size_t __lid2, int g, int w, CELL * c)
{
    (void)__wg; (void)__lid0; (void)__lid1; (void)__lid2;
    (c)->row = (g / w);
    (c)->col = (g % w);
    (c)->w = 0.5f;
}

void struct_private_subscript(const float * in, float * out, int w, int n, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int g = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        CELL c;
        locate(__wg, __lid0, __lid1, __lid2, g, w, &c);
        CELL d = c;
        (d).col = ((d).col + 1);
        if (g < n) {
            out[((c).row * w) + (c).col] = (in[(((d).row * w) + (d).col) - 1] * (c).w);
        }
        __clpart_next_wi_0: ;
    }
}

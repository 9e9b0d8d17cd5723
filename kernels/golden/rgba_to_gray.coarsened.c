/* coarsened by clpart from kernels/integers/rgba_to_gray.cl: kernel 'rgba_to_gray' */
#include "clpart_coarsen.h"

void rgba_to_gray(const uchar * rgba, uchar * gray, short * contrast, int npix, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int i = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        if (i < npix) {
            ushort r = (ushort)rgba[4 * i];
            ushort g = (ushort)rgba[(4 * i) + 1];
            ushort b = (ushort)rgba[(4 * i) + 2];
            uchar y = (uchar)((((77 * ((int)r)) + (150 * ((int)g))) + (29 * ((int)b))) >> 8);
            gray[i] = y;
            contrast[i] = ((short)(((int)((short)y)) - ((int)((short)rgba[(4 * i) + 3]))));
        }
        __clpart_next_wi_0: ;
    }
}

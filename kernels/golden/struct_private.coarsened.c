/* coarsened by clpart from kernels/structs/struct_private.cl: kernel 'struct_private' */
#include "clpart_coarsen.h"

typedef struct { float x, y, z; } FLOAT3;

static void flux_of(const clpart_wg *__wg, size_t __lid0, size_t __lid1, size_t __lid2, FLOAT3 m, float d, FLOAT3 * f)
{
    (void)__wg; (void)__lid0; (void)__lid1; (void)__lid2;
    (f)->x = ((m).x * d);
    (f)->y = (((m).y * d) + 1.0f);
    (f)->z = (((m).z * d) - 1.0f);
}

void struct_private(const float * density, const float * mom, float * flux, int n, const clpart_wg *__wg)
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
        FLOAT3 m;
        (m).x = mom[i];
        (m).y = mom[i + n];
        (m).z = mom[i + (2 * n)];
        FLOAT3 f;
        flux_of(__wg, __lid0, __lid1, __lid2, m, density[i], &f);
        FLOAT3 g = f;
        (g).x += (m).z;
        flux[i] = (g).x;
        flux[i + n] = (g).y;
        flux[i + (2 * n)] = (g).z;
        __clpart_next_wi_0: ;
    }
}

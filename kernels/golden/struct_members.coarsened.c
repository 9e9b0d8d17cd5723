/* coarsened by clpart from kernels/structs/struct_members.cl: kernel 'struct_members' */
#include "clpart_coarsen.h"

typedef struct { float x, y, z; } vec3;

typedef struct { vec3 pos; vec3 vel; int tag; } body;

void struct_members(body * bodies, const float * v, float dt, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int i = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        ((bodies[i]).vel).x = (v[i + 1] - v[i]);
        ((bodies[i]).vel).y = (v[i] * 2.0f);
        ((bodies[i]).pos).x += (dt * ((bodies[i]).vel).x);
        ((bodies[i]).pos).y += (dt * ((bodies[i]).vel).y);
        (bodies[i]).tag = i;
        __clpart_next_wi_0: ;
    }
}

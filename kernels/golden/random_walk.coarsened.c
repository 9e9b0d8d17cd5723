/* coarsened by clpart from kernels/work_groups/random_walk.cl: kernel 'random_walk' */
#include "clpart_coarsen.h"

static uint lcg_next(const clpart_wg *__wg, size_t __lid0, size_t __lid1, size_t __lid2, uint s)
{
    (void)__wg; (void)__lid0; (void)__lid1; (void)__lid2;
    return (s * 1664525u) + 1013904223u;
}

void random_walk(const float * bval, float * out, int gw, int gh, int nwalks, int maxsteps, uint seed, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    float partial[64];
    float chunk[8];
    int g[__n_wi];
    int k[__n_wi];
    int lid[__n_wi];
    int lsize[__n_wi];
    int nchunk[__n_wi];
    float s[__n_wi];
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        g[__wi] = (int)__wg->group_id[0];
        lid[__wi] = (int)__lid0;
        lsize[__wi] = (int)__wg->local_size[0];
        int sx = 1 + ((g[__wi] * 7) % (gw - 2));
        int sy = 1 + ((g[__wi] * 13) % (gh - 2));
        uint state = seed ^ (((uint)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0])) * 2654435761ul);
        float acc = 0.0f;
        for (int w = 0; w < nwalks; w++) {
            int x = sx;
            int y = sy;
            int alive = 1;
            for (s[__wi] = 0; s[__wi] < maxsteps; s[__wi]++) {
                if (alive) {
                    state = lcg_next(__wg, __lid0, __lid1, __lid2, state);
                    uint dir = (state >> 16) & 3u;
                    if (dir == 0u) {
                        x += 1;
                    } else {
                        if (dir == 1u) {
                            x -= 1;
                        } else {
                            if (dir == 2u) {
                                y += 1;
                            } else {
                                y -= 1;
                            }
                        }
                    }
                    if ((((x == 0) || (x == (gw - 1))) || (y == 0)) || (y == (gh - 1))) {
                        acc += bval[(y * gw) + x];
                        alive = 0;
                    }
                }
            }
        }
        partial[lid[__wi]] = acc;
        __clpart_next_wi_0: ;
    }
    /* barrier */
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        nchunk[__wi] = clpart_min(lsize[__wi], 8);
        if (lid[__wi] < nchunk[__wi]) {
            s[__wi] = 0.0f;
            for (k[__wi] = lid[__wi]; k[__wi] < lsize[__wi]; k[__wi] += 8) {
                s[__wi] += partial[k[__wi]];
            }
            chunk[lid[__wi]] = s[__wi];
        }
        __clpart_next_wi_1: ;
    }
    /* barrier */
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        if (lid[__wi] == 0) {
            float total = 0.0f;
            for (k[__wi] = 0; k[__wi] < nchunk[__wi]; k[__wi]++) {
                total += chunk[k[__wi]];
            }
            out[g[__wi]] = (total / ((float)(lsize[__wi] * nwalks)));
        }
        __clpart_next_wi_2: ;
    }
}

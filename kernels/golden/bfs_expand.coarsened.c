/* coarsened by clpart from kernels/indirect/bfs_expand.cl: kernel 'bfs_expand' */
#include "clpart_coarsen.h"

void bfs_expand(const int * starts, const int * edges, const int * frontier, const int * visited, int * cost, int * updating, int nnodes, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int tid = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        if ((tid < nnodes) && frontier[tid]) {
            for (int e = starts[tid]; e < starts[tid + 1]; e++) {
                int id = edges[e];
                if (!visited[id]) {
                    cost[id] = (cost[tid] + 1);
                    updating[id] = 1;
                }
            }
        }
        __clpart_next_wi_0: ;
    }
}

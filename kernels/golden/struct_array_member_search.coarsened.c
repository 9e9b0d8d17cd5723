/* coarsened by clpart from kernels/structs/struct_array_member_search.cl: kernel 'struct_array_member_search' */
#include "clpart_coarsen.h"

typedef struct knode {
    int location;
    int indices[17];
    int keys[17];
    bool is_leaf;
    int num_keys;
} knode;

void struct_array_member_search(long height, const knode * knodes, long knodes_elem, long * cur, long * offset, const int * keys, int * ans, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    int bid[__n_wi];
    int thid[__n_wi];
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        thid[__wi] = (int)__lid0;
        bid[__wi] = (int)__wg->group_id[0];
        __clpart_next_wi_0: ;
    }
    for (int i = 0; ((long)i) < height; i++) { /* work-group uniform */
        for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
        for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
        for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
            __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
            if (((knodes[cur[bid[__wi]]]).keys[thid[__wi]] <= keys[bid[__wi]]) && ((knodes[cur[bid[__wi]]]).keys[thid[__wi] + 1] > keys[bid[__wi]])) {
                if (((long)(knodes[offset[bid[__wi]]]).indices[thid[__wi]]) < knodes_elem) {
                    offset[bid[__wi]] = ((long)(knodes[offset[bid[__wi]]]).indices[thid[__wi]]);
                }
            }
            __clpart_next_wi_1: ;
        }
        /* barrier */
        for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
        for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
        for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
            __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
            if (thid[__wi] == 0) {
                cur[bid[__wi]] = offset[bid[__wi]];
            }
            __clpart_next_wi_2: ;
        }
        /* barrier */
    }
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        if ((knodes[cur[bid[__wi]]]).keys[thid[__wi]] == keys[bid[__wi]]) {
            ans[bid[__wi]] = ((knodes[cur[bid[__wi]]]).location + thid[__wi]);
        }
        __clpart_next_wi_3: ;
    }
}

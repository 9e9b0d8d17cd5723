/* coarsened by clpart from kernels/linearized/chem_wdot.cl: kernel 'chem_wdot' */
#include "clpart_coarsen.h"

void chem_wdot(const float * rf, const float * rb, const float * c, float * wdot, int n, const clpart_wg *__wg)
{
    size_t __lid0, __lid1, __lid2, __wi;
    const size_t __n_wi = __wg->local_size[0] * __wg->local_size[1] * __wg->local_size[2];
    (void)__n_wi; (void)__wi;
    for (__lid2 = 0; __lid2 < __wg->local_size[2]; __lid2++)
    for (__lid1 = 0; __lid1 < __wg->local_size[1]; __lid1++)
    for (__lid0 = 0; __lid0 < __wg->local_size[0]; __lid0++) {
        __wi = (__lid2 * __wg->local_size[1] + __lid1) * __wg->local_size[0] + __lid0;
        int gid = (int)(__wg->group_id[0] * __wg->local_size[0] + __lid0 + __wg->global_offset[0]);
        if (gid < n) {
            float r1 = ((rf[((1 - 1) * n) + gid] * c[((16 - 1) * n) + gid]) * c[((9 - 1) * n) + gid]) - ((rb[((1 - 1) * n) + gid] * c[((22 - 1) * n) + gid]) * c[((17 - 1) * n) + gid]);
            float r2 = ((rf[((2 - 1) * n) + gid] * c[((22 - 1) * n) + gid]) * c[((12 - 1) * n) + gid]) - ((rb[((2 - 1) * n) + gid] * c[((5 - 1) * n) + gid]) * c[((13 - 1) * n) + gid]);
            float r3 = ((rf[((3 - 1) * n) + gid] * c[((1 - 1) * n) + gid]) * c[((12 - 1) * n) + gid]) - ((rb[((3 - 1) * n) + gid] * c[((16 - 1) * n) + gid]) * c[((9 - 1) * n) + gid]);
            float r4 = ((rf[((4 - 1) * n) + gid] * c[((21 - 1) * n) + gid]) * c[((15 - 1) * n) + gid]) - ((rb[((4 - 1) * n) + gid] * c[((20 - 1) * n) + gid]) * c[((8 - 1) * n) + gid]);
            float r5 = ((rf[((5 - 1) * n) + gid] * c[((18 - 1) * n) + gid]) * c[((1 - 1) * n) + gid]) - ((rb[((5 - 1) * n) + gid] * c[((22 - 1) * n) + gid]) * c[((20 - 1) * n) + gid]);
            float r6 = ((rf[((6 - 1) * n) + gid] * c[((5 - 1) * n) + gid]) * c[((15 - 1) * n) + gid]) - ((rb[((6 - 1) * n) + gid] * c[((12 - 1) * n) + gid]) * c[((6 - 1) * n) + gid]);
            float r7 = ((rf[((7 - 1) * n) + gid] * c[((11 - 1) * n) + gid]) * c[((7 - 1) * n) + gid]) - ((rb[((7 - 1) * n) + gid] * c[((2 - 1) * n) + gid]) * c[((19 - 1) * n) + gid]);
            float r8 = ((rf[((8 - 1) * n) + gid] * c[((7 - 1) * n) + gid]) * c[((3 - 1) * n) + gid]) - ((rb[((8 - 1) * n) + gid] * c[((17 - 1) * n) + gid]) * c[((22 - 1) * n) + gid]);
            float r9 = ((rf[((9 - 1) * n) + gid] * c[((11 - 1) * n) + gid]) * c[((22 - 1) * n) + gid]) - ((rb[((9 - 1) * n) + gid] * c[((13 - 1) * n) + gid]) * c[((3 - 1) * n) + gid]);
            float r10 = ((rf[((10 - 1) * n) + gid] * c[((1 - 1) * n) + gid]) * c[((2 - 1) * n) + gid]) - ((rb[((10 - 1) * n) + gid] * c[((22 - 1) * n) + gid]) * c[((17 - 1) * n) + gid]);
            float r11 = ((rf[((11 - 1) * n) + gid] * c[((8 - 1) * n) + gid]) * c[((3 - 1) * n) + gid]) - ((rb[((11 - 1) * n) + gid] * c[((14 - 1) * n) + gid]) * c[((15 - 1) * n) + gid]);
            float r12 = ((rf[((12 - 1) * n) + gid] * c[((4 - 1) * n) + gid]) * c[((22 - 1) * n) + gid]) - ((rb[((12 - 1) * n) + gid] * c[((14 - 1) * n) + gid]) * c[((5 - 1) * n) + gid]);
            float r13 = ((rf[((13 - 1) * n) + gid] * c[((18 - 1) * n) + gid]) * c[((11 - 1) * n) + gid]) - ((rb[((13 - 1) * n) + gid] * c[((20 - 1) * n) + gid]) * c[((18 - 1) * n) + gid]);
            float r14 = ((rf[((14 - 1) * n) + gid] * c[((6 - 1) * n) + gid]) * c[((2 - 1) * n) + gid]) - ((rb[((14 - 1) * n) + gid] * c[((18 - 1) * n) + gid]) * c[((6 - 1) * n) + gid]);
            float r15 = ((rf[((15 - 1) * n) + gid] * c[((17 - 1) * n) + gid]) * c[((3 - 1) * n) + gid]) - ((rb[((15 - 1) * n) + gid] * c[((13 - 1) * n) + gid]) * c[((20 - 1) * n) + gid]);
            float r16 = ((rf[((16 - 1) * n) + gid] * c[((14 - 1) * n) + gid]) * c[((22 - 1) * n) + gid]) - ((rb[((16 - 1) * n) + gid] * c[((20 - 1) * n) + gid]) * c[((16 - 1) * n) + gid]);
            float r17 = ((rf[((17 - 1) * n) + gid] * c[((16 - 1) * n) + gid]) * c[((20 - 1) * n) + gid]) - ((rb[((17 - 1) * n) + gid] * c[((13 - 1) * n) + gid]) * c[((18 - 1) * n) + gid]);
            float r18 = ((rf[((18 - 1) * n) + gid] * c[((1 - 1) * n) + gid]) * c[((21 - 1) * n) + gid]) - ((rb[((18 - 1) * n) + gid] * c[((3 - 1) * n) + gid]) * c[((7 - 1) * n) + gid]);
            float r19 = ((rf[((19 - 1) * n) + gid] * c[((22 - 1) * n) + gid]) * c[((9 - 1) * n) + gid]) - ((rb[((19 - 1) * n) + gid] * c[((12 - 1) * n) + gid]) * c[((13 - 1) * n) + gid]);
            float r20 = ((rf[((20 - 1) * n) + gid] * c[((22 - 1) * n) + gid]) * c[((10 - 1) * n) + gid]) - ((rb[((20 - 1) * n) + gid] * c[((4 - 1) * n) + gid]) * c[((9 - 1) * n) + gid]);
            float r21 = ((rf[((21 - 1) * n) + gid] * c[((8 - 1) * n) + gid]) * c[((11 - 1) * n) + gid]) - ((rb[((21 - 1) * n) + gid] * c[((12 - 1) * n) + gid]) * c[((17 - 1) * n) + gid]);
            float r22 = ((rf[((22 - 1) * n) + gid] * c[((19 - 1) * n) + gid]) * c[((17 - 1) * n) + gid]) - ((rb[((22 - 1) * n) + gid] * c[((6 - 1) * n) + gid]) * c[((1 - 1) * n) + gid]);
            float r23 = ((rf[((23 - 1) * n) + gid] * c[((13 - 1) * n) + gid]) * c[((14 - 1) * n) + gid]) - ((rb[((23 - 1) * n) + gid] * c[((2 - 1) * n) + gid]) * c[((17 - 1) * n) + gid]);
            float r24 = ((rf[((24 - 1) * n) + gid] * c[((1 - 1) * n) + gid]) * c[((8 - 1) * n) + gid]) - ((rb[((24 - 1) * n) + gid] * c[((22 - 1) * n) + gid]) * c[((14 - 1) * n) + gid]);
            wdot[((1 - 1) * n) + gid] = ((((((-r3) - r5) - r10) - r18) + r22) - r24);
            wdot[((2 - 1) * n) + gid] = (((r7 - r10) - r14) + r23);
            wdot[((3 - 1) * n) + gid] = (((((-r8) + r9) - r11) - r15) + r18);
            wdot[((4 - 1) * n) + gid] = ((-r12) + r20);
            wdot[((5 - 1) * n) + gid] = ((r2 - r6) + r12);
            wdot[((6 - 1) * n) + gid] = (((r6 - r14) + r14) + r22);
            wdot[((7 - 1) * n) + gid] = (((-r7) - r8) + r18);
            wdot[((8 - 1) * n) + gid] = (((r4 - r11) - r21) - r24);
            wdot[((9 - 1) * n) + gid] = ((((-r1) + r3) - r19) + r20);
            wdot[((10 - 1) * n) + gid] = (-r20);
            wdot[((11 - 1) * n) + gid] = ((((-r7) - r9) - r13) - r21);
            wdot[((12 - 1) * n) + gid] = (((((-r2) - r3) + r6) + r19) + r21);
            wdot[((13 - 1) * n) + gid] = (((((r2 + r9) + r15) + r17) + r19) - r23);
            wdot[((14 - 1) * n) + gid] = ((((r11 + r12) - r16) - r23) + r24);
            wdot[((15 - 1) * n) + gid] = (((-r4) - r6) + r11);
            wdot[((16 - 1) * n) + gid] = ((((-r1) + r3) + r16) - r17);
            wdot[((17 - 1) * n) + gid] = ((((((r1 + r8) + r10) - r15) + r21) - r22) + r23);
            wdot[((18 - 1) * n) + gid] = (((((-r5) - r13) + r13) + r14) + r17);
            wdot[((19 - 1) * n) + gid] = (r7 - r22);
            wdot[((20 - 1) * n) + gid] = (((((r4 + r5) + r13) + r15) + r16) - r17);
            wdot[((21 - 1) * n) + gid] = ((-r4) - r18);
            wdot[((22 - 1) * n) + gid] = ((((((((((r1 - r2) + r5) + r8) - r9) + r10) - r12) - r16) - r19) - r20) + r24);
        }
        __clpart_next_wi_0: ;
    }
}

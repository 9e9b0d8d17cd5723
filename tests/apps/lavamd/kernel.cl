/* Particle potential and force in a 3-D grid of boxes, as the
   heterogeneous suites write it: one work-group per home box. The
   work-items stage the home box's particles in local memory, then for the
   home box and each of its neighbours the neighbour's particles and
   charges, and each work-item accumulates, for its particles of the home
   box, the interaction with every particle of that box into fv. */
#include "lavamd.h"

__kernel void kernel_gpu_opencl(par_str d_par_gpu, dim_str d_dim_gpu,
                                __global box_str *d_box_gpu, __global FOUR_VECTOR *d_rv_gpu,
                                __global fp *d_qv_gpu, __global FOUR_VECTOR *d_fv_gpu)
{
    int bx = get_group_id(0);
    int tx = get_local_id(0);
    int wtx = tx;

    __local FOUR_VECTOR rA_shared[NUMBER_PAR_PER_BOX];
    __local FOUR_VECTOR rB_shared[NUMBER_PAR_PER_BOX];
    __local fp qB_shared[NUMBER_PAR_PER_BOX];

    if (bx < d_dim_gpu.number_boxes) {
        fp a2 = 2 * d_par_gpu.alpha * d_par_gpu.alpha;
        int first_i, pointer, first_j, k, j;
        fp r2, u2, vij, fs, fxij, fyij, fzij;
        THREE_VECTOR d;

        /* the home box's particles */
        first_i = d_box_gpu[bx].offset;
        while (wtx < NUMBER_PAR_PER_BOX) {
            rA_shared[wtx] = d_rv_gpu[first_i + wtx];
            wtx = wtx + NUMBER_THREADS;
        }
        wtx = tx;
        barrier(CLK_LOCAL_MEM_FENCE);

        /* the home box itself, then each neighbour */
        for (k = 0; k < (1 + d_box_gpu[bx].nn); k++) {
            if (k == 0)
                pointer = bx;
            else
                pointer = d_box_gpu[bx].nei[k - 1].number;
            first_j = d_box_gpu[pointer].offset;

            while (wtx < NUMBER_PAR_PER_BOX) {
                rB_shared[wtx] = d_rv_gpu[first_j + wtx];
                qB_shared[wtx] = d_qv_gpu[first_j + wtx];
                wtx = wtx + NUMBER_THREADS;
            }
            wtx = tx;
            barrier(CLK_LOCAL_MEM_FENCE);

            while (wtx < NUMBER_PAR_PER_BOX) {
                for (j = 0; j < NUMBER_PAR_PER_BOX; j++) {
                    r2 = rA_shared[wtx].v + rB_shared[j].v - DOT(rA_shared[wtx], rB_shared[j]);
                    u2 = a2 * r2;
                    vij = exp(-u2);
                    fs = 2 * vij;
                    d.x = rA_shared[wtx].x - rB_shared[j].x;
                    fxij = fs * d.x;
                    d.y = rA_shared[wtx].y - rB_shared[j].y;
                    fyij = fs * d.y;
                    d.z = rA_shared[wtx].z - rB_shared[j].z;
                    fzij = fs * d.z;
                    d_fv_gpu[first_i + wtx].v += qB_shared[j] * vij;
                    d_fv_gpu[first_i + wtx].x += qB_shared[j] * fxij;
                    d_fv_gpu[first_i + wtx].y += qB_shared[j] * fyij;
                    d_fv_gpu[first_i + wtx].z += qB_shared[j] * fzij;
                }
                wtx = wtx + NUMBER_THREADS;
            }
            wtx = tx;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
}

/* A 2-D Jacobi sweep and the largest change it made, as iterative solvers
   check convergence: the change is reduced in one launch, each work-group
   writing its own maximum and the last work-group to finish (it draws the
   last ticket of an atomic counter) reducing those into the result. */
#define WG 256

__kernel void relax(__global const float *u, __global float *v, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if (i < 1 || j < 1 || i >= n - 1 || j >= n - 1)
        return;
    v[i * n + j] = 0.25f * (u[(i - 1) * n + j] + u[(i + 1) * n + j]
                            + u[i * n + j - 1] + u[i * n + j + 1]);
}

__kernel void change(__global const float *u, __global const float *v, __global float *partial,
                     __global uint *ticket, __global float *result, int n)
{
    __local float best[WG];
    __local int last;
    int lid = get_local_id(0);
    int g = get_global_id(0);
    float d = 0.0f;
    for (int k = g; k < n * n; k += get_global_size(0))
        d = fmax(d, fabs(v[k] - u[k]));
    best[lid] = d;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s /= 2) {
        if (lid < s)
            best[lid] = fmax(best[lid], best[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        partial[get_group_id(0)] = best[0];
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        last = atomic_inc(&ticket[0]) == get_num_groups(0) - 1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (last && lid == 0) {
        float m = 0.0f;
        for (int k = 0; k < (int)get_num_groups(0); k++)
            m = fmax(m, partial[k]);
        result[0] = m;
        ticket[0] = 0;
    }
}

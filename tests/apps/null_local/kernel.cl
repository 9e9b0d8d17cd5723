/* Launched with no work-group size: the driver picks it. */

/* Its results depend on that size: where each work-item sits in its group. */
__kernel void where(__global int* out, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = (int)get_local_size(0) * 1000000 + (int)get_group_id(0) * 1000
                 + (int)get_num_groups(0) % 1000;
}

/* The same in two dimensions, through a helper. */
int lane(void) { return (int)(get_local_id(1) * get_local_size(0) + get_local_id(0)); }

__kernel void where2d(__global int* out, int w)
{
    int x = get_global_id(0), y = get_global_id(1);
    out[y * w + x] = lane() * 10 + (int)get_group_id(1);
}

/* Its results cannot depend on it: it may split with any size. */
__kernel void scale(__global const float* a, __global float* b, float s, int n)
{
    int i = get_global_id(0);
    if (i < n)
        b[i] = a[i] * s + (float)get_global_size(0);
}

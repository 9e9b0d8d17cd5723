/* One round of a stream compaction, as filters write it: the elements
   above the threshold are appended to the output list, each work-item
   taking its slot from an atomic counter. Which slot an element gets
   depends on the order the work-items arrive in. */
__kernel void keep(__global const float *in, __global float *out, __global uint *count,
                   float threshold, int n)
{
    int i = get_global_id(0);
    if (i < n && in[i] > threshold) {
        uint slot = atomic_inc(&count[0]);
        out[slot] = in[i];
    }
}

// Scatter with a benign race: every key marks its bucket with the bucket's
// own weight, bucket_weight[b] = weight[b] for b = keys[i] % nbuckets, so
// several work-groups (and devices) write one element, always with the
// same value. The subscript is data dependent: bucket_weight goes whole to
// each device and the copies merge element by element, the run-time check
// finding no two devices with different values.
// @run --global 1024 --local 64 --arg keys=rand:1024:1 --arg weight=rand:64:2 --arg bucket_weight=zeros:64 --arg nbuckets=64 --arg n=1024
// @run --global 1000 --local 8 --arg keys=rand:997:3 --arg weight=rand:40:4 --arg bucket_weight=rand:40:5 --arg nbuckets=37 --arg n=997
// @float
// @expect splittable whole=weight,bucket_weight
__kernel void scatter_same_value(__global const uint *keys, __global const float *weight,
                                 __global float *bucket_weight, uint nbuckets, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        uint b = keys[i] % nbuckets;
        bucket_weight[b] = weight[b];
    }
}

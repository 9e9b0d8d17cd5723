// Rodinia gaussian elimination Fan1, in its original pointer-arithmetic form:
// *(m + size*(gid + t + 1) + t) = *(a + size*(gid + t + 1) + t) / *(a + size*t + t).
// Reads column t below the pivot and the pivot itself; b is an unused buffer
// argument (empty footprint).
// @run --global 64 --local 16 --arg m_dev=zeros:4096 --arg a_dev=rand:4096:1 --arg b_dev=rand:64:2 --arg size=64 --arg t=5
// @run --global 56 --local 8 --arg m_dev=zeros:2500 --arg a_dev=rand:2500:3 --arg b_dev=rand:50:4 --arg size=50 --arg t=0
// @expect splittable
// @float
__kernel void fan1(__global float *m_dev, __global float *a_dev,
                   __global float *b_dev, const int size, const int t)
{
    int globalId = get_global_id(0);
    if (globalId < size - 1 - t) {
        *(m_dev + size * (globalId + t + 1) + t) =
            *(a_dev + size * (globalId + t + 1) + t) / *(a_dev + size * t + t);
    }
}

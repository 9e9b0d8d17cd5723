// Rodinia gaussian elimination Fan2 (2-D): updates rows t+1.. of a from the
// pivot row t and the multipliers m; work-items with y == 0 also update b.
// Row t of a is read but only rows below it are written.
// @run --global 32,32 --local 8,8 --arg m_dev=rand:1024:1 --arg a_dev=rand:1024:2 --arg b_dev=rand:32:3 --arg size=32 --arg t=3
// @run --global 32,32 --local 4,8 --arg m_dev=rand:900:4 --arg a_dev=rand:900:5 --arg b_dev=rand:30:6 --arg size=30 --arg t=0
// @expect splittable
// @float
__kernel void fan2(__global float *m_dev, __global float *a_dev,
                   __global float *b_dev, const int size, const int t)
{
    int globalIdx = get_global_id(0);
    int globalIdy = get_global_id(1);
    if (globalIdx < size - 1 - t && globalIdy < size - t) {
        a_dev[size * (globalIdx + 1 + t) + (globalIdy + t)] -=
            m_dev[size * (globalIdx + 1 + t) + t] * a_dev[size * t + (globalIdy + t)];
        if (globalIdy == 0) {
            b_dev[globalIdx + 1 + t] -=
                m_dev[size * (globalIdx + 1 + t) + (globalIdy + t)] * b_dev[t];
        }
    }
}

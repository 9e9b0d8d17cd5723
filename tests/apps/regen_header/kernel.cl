/* The operation comes from a header the host writes before each build. */
#include "gen.h"

__kernel void apply(__global const float* x, __global float* y, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        float v = x[i];
        y[i] = OP(v);
    }
}

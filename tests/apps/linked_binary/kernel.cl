/* Compiled on its own with the header "weights.h" given in memory
   (clCompileProgram), linked with lib.cl (clLinkProgram). */
#include "weights.h"

float weigh(float v, int i);

__kernel void weighted(__global const float *x, __global float *y, int n)
{
    int i = get_global_id(0);
    if (i < n)
        y[i] = weigh(x[i], i) + W0;
}

// float4 addition through vload4/vstore4 on plain float buffers: work-item i
// touches elements 4*i .. 4*i + 3 of each array.
// @run --global 256 --local 32 --arg a=rand:1024:1 --arg b=rand:1024:2 --arg c=zeros:1024
// @run --global 250 --local 10 --arg a=rand:1000:3 --arg b=rand:1000:4 --arg c=zeros:1000
// @expect splittable
__kernel void vec4_add(__global const float *a, __global const float *b,
                       __global float *c)
{
    int i = get_global_id(0);
    float4 va = vload4(i, a);
    float4 vb = vload4(i, b);
    vstore4(va + vb, i, c);
}

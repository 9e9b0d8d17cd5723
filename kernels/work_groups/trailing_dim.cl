// Hosts launch 1-D kernels as work_dim 2 with global [n, 1] and
// local [l, 1]. The kernel is analyzed for one dimension; the launch keeps
// its work_dim, so get_work_dim() is 2 on every device, as unsplit.
// @run --global 512,1 --local 64,1 --arg in=rand:512:1 --arg out=zeros:512
// @run --global 600,1 --local 8,1 --arg in=rand:600:2 --arg out=rand:600:3
// @expect splittable
// @float
__kernel void trailing_dim(__global const float *in, __global float *out)
{
    int i = get_global_id(0);
    out[i] = in[i] * (float)get_work_dim() + (float)get_global_size(1);
}

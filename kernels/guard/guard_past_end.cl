// The guarantee: the guard `i + 1 < n * m` (a product of scalars) is not
// modeled, so the analyzed range of `a` reaches one element past its end
// (`a[1 .. gs0]` over 1024 elements). A launch refused such a valid kernel
// ("argument 'a' is too small for this ndrange", exit 2), with one device
// or two. With the run-time guard on, an analyzed range past a buffer now
// sends the array whole (a written one runs the kernel unsplit), and the
// guard catches an access that does leave the buffer; without the guard
// the launch is still refused.
// @run --global 1024 --local 64 --arg a=rand:1024:1 --arg b=rand:1024:7 --arg n=32 --arg m=32
// @run --global 1000 --local 8 --arg a=rand:1000:2 --arg b=zeros:1000 --arg n=25 --arg m=40
// @expect splittable
// @float
__kernel void guard_past_end(__global const float *a, __global float *b, int n, int m)
{
    int i = get_global_id(0);
    if (i + 1 < n * m)
        b[i] = a[i + 1];
}

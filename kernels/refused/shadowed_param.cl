// The guarantee: a private array in an inner scope named like a buffer
// parameter. The subkernel's rewrite finds a parameter's uses by name, so
// it rebased and checked the private array's subscripts as the buffer's:
// every split launch indexed the private array with the buffer's base and
// corrupted the work-item's stack (clpart itself crashed with PoCL). A
// declaration that shadows a kernel parameter now makes the kernel
// unsplittable with the variable's location; it runs whole.
// @run --global 64 --local 16 --arg x=zeros:64 --arg y=zeros:64
// @run --global 40 --local 8 --arg x=seq:40 --arg y=zeros:40
// @expect not-splittable
// @float
__kernel void shadowed_param(__global float *x, __global float *y)
{
    int i = get_global_id(0);
    {
        float x[8];
        for (int k = 0; k < 8; k++)
            x[k] = (float)(k + i);
        float4 *x4 = (float4 *)x;
        y[i] = x4[1].y + x[3];
    }
    x[i] = 2.0f;
}

// Bad input: valid OpenCL C 1.2 that reads an image2d_t argument. Images are
// not supported. Expected: rejected as unsupported, naming the argument.
__constant sampler_t smp = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;

__kernel void image(__read_only image2d_t src, __global float *out, int width)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    float4 p = read_imagef(src, smp, (int2)(x, y));
    out[y * width + x] = p.x + p.y + p.z;
}

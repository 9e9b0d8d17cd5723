// A kernel that reads an image2d_t argument through a sampler
// declared at program scope. Images and samplers are parameters of their
// own kind: the kernel is analyzed (`out` is bounded by rows) and runs
// unsplit, the report naming the image argument; `clpart run` cannot make
// images (run the host program under `clpart exec`).
__constant sampler_t smp = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;

__kernel void read_image(__read_only image2d_t src, __global float *out, int width)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    float4 p = read_imagef(src, smp, (int2)(x, y));
    out[y * width + x] = p.x + p.y + p.z;
}

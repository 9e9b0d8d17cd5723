// The integer members of a struct passed by value are launch
// parameters (an SDK host's parameter block): `p.width` is the row pitch
// of a 2-D image, `p.height` its rows, `p.radius` a vertical blur's reach.
// The kernel never changes `p`, so each member is a parameter read from the
// argument's bytes at launch, and the blur splits by rows with exact ranges.
// @run --global 64,32 --local 16,4 --arg in=rand:2048:1 --arg out=zeros:2048 --arg p=bytes:4000000020000000020000000000003f
// @run --global 48,24 --local 16,4 --arg in=rand:1152:2 --arg out=zeros:1152 --arg p=bytes:3000000018000000010000000000c03f
// @expect splittable
typedef struct {
    int width;
    int height;
    int radius;
    float scale;
} blur_params;

__kernel void struct_members_as_params(__global const float *in,
                                       __global float *out,
                                       blur_params p)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= p.width || y >= p.height)
        return;
    float s = 0.0f;
    for (int d = -p.radius; d <= p.radius; d++) {
        int yy = min(max(y + d, 0), p.height - 1);
        s += in[yy * p.width + x];
    }
    out[y * p.width + x] = s * p.scale;
}

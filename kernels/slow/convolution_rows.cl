// Separable convolution, row pass (SDK style): each work-group loads its
// row segment plus a halo of RADIUS pixels on both sides into a __local
// tile with a loop (pixels outside the image read as 0), then filters
// along the row. Halo loops with run-time image sizes.
// @run --global 64,16 --local 16,4 --arg in=rand:1024:1 --arg out=zeros:1024 --arg filt=rand:9:2 --arg width=64 --arg height=16
// @run --global 48,15 --local 16,3 --arg in=rand:675:3 --arg out=zeros:675 --arg filt=rand:9:4 --arg width=45 --arg height=15
// @expect splittable
// @float
#define RADIUS 4
#define TW 16
#define TH 4

__kernel void convolution_rows(__global const float *in, __global float *out, __constant float *filt,
                               int width, int height)
{
    __local float tile[TH][TW + 2 * RADIUS];
    int lx = get_local_id(0);
    int ly = get_local_id(1);
    int x0 = get_group_id(0) * TW;
    int y = get_global_id(1);
    for (int i = lx; i < TW + 2 * RADIUS; i += TW) {
        int gx = x0 + i - RADIUS;
        tile[ly][i] = (gx >= 0 && gx < width && y < height) ? in[y * width + gx] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int x = x0 + lx;
    if (x < width && y < height) {
        float s = 0.0f;
        for (int k = -RADIUS; k <= RADIUS; k++)
            s += filt[RADIUS - k] * tile[ly][lx + RADIUS + k];
        out[y * width + x] = s;
    }
}

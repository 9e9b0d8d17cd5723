// Separable convolution, column pass: every work-item filters its column
// with a halo loop of RADIUS rows above and below, rows clamped to the
// image. Clamped subscripts over a run-time width and height.
// @run --global 32,32 --local 8,8 --arg in=rand:1024:1 --arg out=zeros:1024 --arg filt=rand:9:2 --arg width=32 --arg height=32
// @run --global 24,40 --local 8,5 --arg in=rand:840:3 --arg out=zeros:840 --arg filt=rand:9:4 --arg width=21 --arg height=40
// @expect splittable
// @float
#define RADIUS 4

__kernel void convolution_cols(__global const float *in, __global float *out, __constant float *filt,
                               int width, int height)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < width && y < height) {
        float s = 0.0f;
        for (int k = -RADIUS; k <= RADIUS; k++) {
            int yy = clamp(y + k, 0, height - 1);
            s += filt[RADIUS - k] * in[yy * width + x];
        }
        out[y * width + x] = s;
    }
}

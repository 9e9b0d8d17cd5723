// Anisotropic image diffusion (SRAD style) as a program of three kernels:
// diffusion_update (first, the kernel the runs launch) moves each pixel
// along the coefficients of itself and its south and east neighbours,
// diffusion_coeff computes the four directional derivatives and the
// diffusion coefficient per pixel (neighbours clamped at the border), and
// diffusion_copy writes the result back. `clpart analyze` analyzes all three.
// @run --global 32,32 --local 8,8 --arg img=rand:1024:1 --arg c=rand:1024:2 --arg dn=rand:1024:3 --arg ds=rand:1024:4 --arg dw=rand:1024:5 --arg de=rand:1024:6 --arg out=zeros:1024 --arg rows=32 --arg cols=32 --arg lambda=0.25
// @run --global 24,30 --local 8,6 --arg img=rand:690:7 --arg c=rand:690:8 --arg dn=rand:690:9 --arg ds=rand:690:10 --arg dw=rand:690:11 --arg de=rand:690:12 --arg out=zeros:690 --arg rows=30 --arg cols=23 --arg lambda=0.5
// @expect splittable
// @float
__kernel void diffusion_update(__global const float *img, __global const float *c,
                               __global const float *dn, __global const float *ds,
                               __global const float *dw, __global const float *de,
                               __global float *out, int rows, int cols, float lambda)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < cols && y < rows) {
        int k = y * cols + x;
        int ys = min(y + 1, rows - 1);
        int xe = min(x + 1, cols - 1);
        float cn = c[k];
        float cs = c[ys * cols + x];
        float cw = c[k];
        float ce = c[y * cols + xe];
        float d = cn * dn[k] + cs * ds[k] + cw * dw[k] + ce * de[k];
        out[k] = img[k] + 0.25f * lambda * d;
    }
}

__kernel void diffusion_coeff(__global const float *img, __global float *c, __global float *dn,
                              __global float *ds, __global float *dw, __global float *de,
                              int rows, int cols, float q0sqr)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < cols && y < rows) {
        int k = y * cols + x;
        float j = img[k];
        int yn = max(y - 1, 0);
        int ys = min(y + 1, rows - 1);
        int xw = max(x - 1, 0);
        int xe = min(x + 1, cols - 1);
        float n = img[yn * cols + x] - j;
        float s = img[ys * cols + x] - j;
        float w = img[y * cols + xw] - j;
        float e = img[y * cols + xe] - j;
        float g2 = (n * n + s * s + w * w + e * e) / (j * j + 1.0f);
        float l = (n + s + w + e) / (j + 1.0f);
        float num = 0.5f * g2 - 0.0625f * l * l;
        float den = 1.0f + 0.25f * l;
        float qsqr = num / (den * den + 1.0f);
        float cc = 1.0f / (1.0f + (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr) + 1.0f));
        c[k] = clamp(cc, 0.0f, 1.0f);
        dn[k] = n;
        ds[k] = s;
        dw[k] = w;
        de[k] = e;
    }
}

__kernel void diffusion_copy(__global const float *src, __global float *dst, int n)
{
    int i = get_global_id(0);
    if (i < n)
        dst[i] = src[i];
}

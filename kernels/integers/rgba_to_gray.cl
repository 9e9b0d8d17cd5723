// 8-bit image conversion with small integer types: reads uchar RGBA pixels
// rgba[4*i .. 4*i + 3], writes a uchar luminance and a short (gray - alpha).
// Buffer sizes keep rand values inside the uchar range (N <= 256).
// @run --global 64 --local 16 --arg rgba=rand:256:1 --arg gray=zeros:64 --arg contrast=zeros:64 --arg npix=64
// @run --global 64 --local 8 --arg rgba=rand:240:2 --arg gray=zeros:60 --arg contrast=zeros:60 --arg npix=60
// @expect splittable
__kernel void rgba_to_gray(__global const uchar *rgba, __global uchar *gray,
                           __global short *contrast, int npix)
{
    int i = get_global_id(0);
    if (i < npix) {
        ushort r = rgba[4 * i];
        ushort g = rgba[4 * i + 1];
        ushort b = rgba[4 * i + 2];
        uchar y = (uchar)((77 * r + 150 * g + 29 * b) >> 8);
        gray[i] = y;
        contrast[i] = (short)((short)y - (short)rgba[4 * i + 3]);
    }
}

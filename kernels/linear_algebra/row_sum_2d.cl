// 2-D NDRange with 16x16 work-groups: out[y*width + x] sums the count rows
// y*count .. y*count + count - 1 of in (a (height*count) x width matrix) at
// column x. The loop bound count is a run-time argument.
// @run --global 32,32 --local 16,16 --arg in=rand:4096:1 --arg out=zeros:1024 --arg width=32 --arg height=32 --arg count=4
// @run --global 48,32 --local 16,16 --arg in=rand:2400:2 --arg out=zeros:800 --arg width=40 --arg height=20 --arg count=3
// @expect splittable
// @float
__kernel void row_sum_2d(__global const float *in, __global float *out,
                         int width, int height, int count)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < width && y < height) {
        float s = 0.0f;
        for (int k = 0; k < count; k++)
            s += in[(y * count + k) * width + x];
        out[y * width + x] = s;
    }
}

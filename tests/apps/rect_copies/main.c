/* Rectangular transfers around split kernels, as image and tiling codes
   use them: a tile written into a grid with clEnqueueWriteBufferRect, the
   grid smoothed, a window of the result copied into a smaller grid with
   clEnqueueCopyBufferRect and scaled there, a window of that read back
   with clEnqueueReadBufferRect beside the whole grids. Checked against
   the CPU; prints a hash of the results. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <CL/cl.h>

#define CHECK(err, what) do { if ((err) != CL_SUCCESS) { \
    fprintf(stderr, "%s failed: %d\n", what, (int)(err)); exit(2); } } while (0)

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "cannot open %s\n", path); exit(2); }
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    char *s = malloc(*len + 1);
    if (fread(s, 1, *len, f) != *len) { fprintf(stderr, "cannot read %s\n", path); exit(2); }
    s[*len] = '\0';
    fclose(f);
    return s;
}

static unsigned long hash(unsigned long h, const float *v, size_t n)
{
    const unsigned char *b = (const unsigned char *)v;
    for (size_t i = 0; i < n * sizeof(float); i++)
        h = (h ^ b[i]) * 1099511628211UL;
    return h;
}

static size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

/* the CPU's smoothing, as the kernel computes it */
static void smooth_cpu(const float *in, float *out, int rows, int cols)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            int i = r * cols + c;
            if (r == 0 || c == 0 || r == rows - 1 || c == cols - 1)
                out[i] = in[i];
            else
                out[i] = 0.2f * (in[i] + in[i - cols] + in[i + cols] + in[i - 1] + in[i + 1]);
        }
}

int main(int argc, char **argv)
{
    int rows = argc > 1 ? atoi(argv[1]) : 96, cols = argc > 2 ? atoi(argv[2]) : 80;
    /* the tile written in, the window copied out, the window read back */
    int tr = rows / 2, tc = cols / 2, t_r0 = rows / 4, t_c0 = cols / 8;
    int wr = rows / 2, wc = cols / 2, w_r0 = rows / 3, w_c0 = cols / 4;
    int rr = wr / 2, rc = wc / 2, r_r0 = 3, r_c0 = 5;
    size_t grid = (size_t)rows * cols, win = (size_t)wr * wc;
    float *g = malloc(grid * sizeof(float)), *tile = malloc((size_t)tr * tc * sizeof(float));
    float *want_g = malloc(grid * sizeof(float)), *want_s = malloc(grid * sizeof(float));
    float *want_w = malloc(win * sizeof(float));
    float *got_s = malloc(grid * sizeof(float)), *got_w = malloc(win * sizeof(float));
    float *got_r = malloc((size_t)rr * rc * sizeof(float));
    for (size_t i = 0; i < grid; i++)
        g[i] = (float)(i % 31) * 0.5f - 3.0f;
    for (int i = 0; i < tr * tc; i++)
        tile[i] = (float)(i % 13) + 100.0f;

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err, "clCreateCommandQueue");
    cl_mem d_in = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, grid * sizeof(float), g, &err);
    CHECK(err, "clCreateBuffer in");
    cl_mem d_out = clCreateBuffer(context, CL_MEM_READ_WRITE, grid * sizeof(float), NULL, &err);
    CHECK(err, "clCreateBuffer out");
    cl_mem d_win = clCreateBuffer(context, CL_MEM_READ_WRITE, win * sizeof(float), NULL, &err);
    CHECK(err, "clCreateBuffer window");

    size_t len;
    char *source = read_file("kernel.cl", &len);
    cl_program program = clCreateProgramWithSource(context, 1, (const char **)&source, &len, &err);
    CHECK(err, "clCreateProgramWithSource");
    err = clBuildProgram(program, 1, &device, "", NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[4096];
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build failed:\n%s\n", log);
        return 2;
    }
    cl_kernel smooth = clCreateKernel(program, "smooth", &err);
    CHECK(err, "clCreateKernel smooth");
    cl_kernel scale = clCreateKernel(program, "scale", &err);
    CHECK(err, "clCreateKernel scale");
    size_t f = sizeof(float);

    /* 1. the tile into the grid at (t_r0, t_c0) */
    size_t t_buf[3] = {t_c0 * f, t_r0, 0}, t_host[3] = {0, 0, 0}, t_reg[3] = {tc * f, tr, 1};
    CHECK(clEnqueueWriteBufferRect(queue, d_in, CL_TRUE, t_buf, t_host, t_reg, cols * f, 0,
                                   tc * f, 0, tile, 0, NULL, NULL), "write rect");
    /* 2. smoothed twice, in and out swapped */
    size_t local[2] = {16, 8};
    size_t global[2] = {round_up(cols, 16), round_up(rows, 8)};
    for (int step = 0; step < 2; step++) {
        cl_mem from = step ? d_out : d_in, to = step ? d_in : d_out;
        CHECK(clSetKernelArg(smooth, 0, sizeof(cl_mem), &from), "smooth 0");
        CHECK(clSetKernelArg(smooth, 1, sizeof(cl_mem), &to), "smooth 1");
        CHECK(clSetKernelArg(smooth, 2, sizeof(int), &rows), "smooth 2");
        CHECK(clSetKernelArg(smooth, 3, sizeof(int), &cols), "smooth 3");
        CHECK(clEnqueueNDRangeKernel(queue, smooth, 2, NULL, global, local, 0, NULL, NULL), "launch smooth");
    }
    /* 3. the window at (w_r0, w_c0) of the result into its own grid, scaled */
    size_t w_src[3] = {w_c0 * f, w_r0, 0}, w_dst[3] = {0, 0, 0}, w_reg[3] = {wc * f, wr, 1};
    CHECK(clEnqueueCopyBufferRect(queue, d_in, d_win, w_src, w_dst, w_reg, cols * f, 0,
                                  wc * f, 0, 0, NULL, NULL), "copy rect");
    float s = 0.5f; /* exact products: no contraction can differ */
    size_t w_global[2] = {round_up(wc, 16), round_up(wr, 8)};
    CHECK(clSetKernelArg(scale, 0, sizeof(cl_mem), &d_win), "scale 0");
    CHECK(clSetKernelArg(scale, 1, sizeof(float), &s), "scale 1");
    CHECK(clSetKernelArg(scale, 2, sizeof(int), &wr), "scale 2");
    CHECK(clSetKernelArg(scale, 3, sizeof(int), &wc), "scale 3");
    CHECK(clEnqueueNDRangeKernel(queue, scale, 2, NULL, w_global, local, 0, NULL, NULL), "launch scale");
    /* 4. a window of the scaled grid read back, then both grids whole */
    size_t r_buf[3] = {r_c0 * f, r_r0, 0}, r_host[3] = {0, 0, 0}, r_reg[3] = {rc * f, rr, 1};
    CHECK(clEnqueueReadBufferRect(queue, d_win, CL_TRUE, r_buf, r_host, r_reg, wc * f, 0,
                                  rc * f, 0, got_r, 0, NULL, NULL), "read rect");
    CHECK(clEnqueueReadBuffer(queue, d_in, CL_TRUE, 0, grid * f, got_s, 0, NULL, NULL), "read grid");
    CHECK(clEnqueueReadBuffer(queue, d_win, CL_TRUE, 0, win * f, got_w, 0, NULL, NULL), "read window");

    for (int r = 0; r < tr; r++)
        memcpy(g + (size_t)(t_r0 + r) * cols + t_c0, tile + (size_t)r * tc, tc * f);
    smooth_cpu(g, want_s, rows, cols);
    smooth_cpu(want_s, want_g, rows, cols);
    for (int r = 0; r < wr; r++)
        for (int c = 0; c < wc; c++)
            want_w[r * wc + c] = s * want_g[(size_t)(w_r0 + r) * cols + w_c0 + c] + 1.0f;
    int mismatches = 0;
    for (size_t i = 0; i < grid; i++)
        mismatches += got_s[i] != want_g[i];
    for (size_t i = 0; i < win; i++)
        mismatches += got_w[i] != want_w[i];
    for (int r = 0; r < rr; r++)
        for (int c = 0; c < rc; c++)
            mismatches += got_r[r * rc + c] != want_w[(r_r0 + r) * wc + r_c0 + c];
    unsigned long h = hash(1469598103934665603UL, got_s, grid);
    h = hash(h, got_w, win);
    printf("result %016lx\n", hash(h, got_r, (size_t)rr * rc));
    printf("rect_copies %dx%d: %d mismatches\n", rows, cols, mismatches);

    clReleaseKernel(smooth);
    clReleaseKernel(scale);
    clReleaseProgram(program);
    clReleaseMemObject(d_in);
    clReleaseMemObject(d_out);
    clReleaseMemObject(d_win);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(source); free(g); free(tile); free(want_g); free(want_s); free(want_w);
    free(got_s); free(got_w); free(got_r);
    return mismatches != 0;
}

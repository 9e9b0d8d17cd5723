/* Path finding through a rows x cols grid of weights by dynamic
   programming, as the heterogeneous suites write it: each launch advances
   PYRAMID rows at once (the last one fewer), blocks of 256 cells with
   PYRAMID cells of halo on each side, the two row buffers swapped between
   launches. The host checks the last row against its own sweep.
   ./pathfinder COLS ROWS PYRAMID */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <CL/cl.h>

#define CHECK(err, what) do { if ((err) != CL_SUCCESS) { \
    fprintf(stderr, "%s failed: %d\n", what, (int)(err)); exit(2); } } while (0)
#define BLOCK 256

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

/* Wall-clock milliseconds, for the device section's time. */
static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int min3(int a, int b, int c)
{
    int m = a < b ? a : b;
    return m < c ? m : c;
}

int main(int argc, char **argv)
{
    int cols = argc > 1 ? atoi(argv[1]) : 1000;
    int rows = argc > 2 ? atoi(argv[2]) : 100;
    int pyramid = argc > 3 ? atoi(argv[3]) : 20;
    if (cols <= 0 || rows <= 1 || pyramid <= 0 || 2 * pyramid >= BLOCK) {
        fprintf(stderr, "need COLS > 0, ROWS > 1, 0 < 2 * PYRAMID < %d\n", BLOCK);
        return 2;
    }
    size_t cells = (size_t)rows * cols;
    int *data = malloc(cells * sizeof(int)), *out = malloc(cols * sizeof(int));
    for (size_t i = 0; i < cells; i++)
        data[i] = (int)((i * 2654435761u) >> 5) % 10;

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err, "clCreateCommandQueue");
    size_t row_bytes = sizeof(int) * cols;
    cl_mem d_wall = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                   row_bytes * (rows - 1), data + cols, &err);
    CHECK(err, "clCreateBuffer wall");
    cl_mem d_rows[2];
    d_rows[0] = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, row_bytes, data, &err);
    CHECK(err, "clCreateBuffer row 0");
    d_rows[1] = clCreateBuffer(context, CL_MEM_READ_WRITE, row_bytes, NULL, &err);
    CHECK(err, "clCreateBuffer row 1");

    size_t len;
    char *source = read_file("kernel.cl", &len);
    cl_program program = clCreateProgramWithSource(context, 1, (const char **)&source, &len, &err);
    CHECK(err, "clCreateProgramWithSource");
    free(source);
    CHECK(clBuildProgram(program, 1, &device, NULL, NULL, NULL), "clBuildProgram");
    cl_kernel kernel = clCreateKernel(program, "dynproc", &err);
    CHECK(err, "clCreateKernel");

    int border = pyramid;
    int small = BLOCK - 2 * pyramid;
    int blocks = cols / small + (cols % small ? 1 : 0);
    size_t local = BLOCK, global = (size_t)blocks * BLOCK;
    CHECK(clSetKernelArg(kernel, 1, sizeof(cl_mem), &d_wall), "arg 1");
    CHECK(clSetKernelArg(kernel, 4, sizeof(int), &cols), "arg 4");
    CHECK(clSetKernelArg(kernel, 6, sizeof(int), &border), "arg 6");
    CHECK(clSetKernelArg(kernel, 7, sizeof(int) * BLOCK, NULL), "arg 7");
    CHECK(clSetKernelArg(kernel, 8, sizeof(int) * BLOCK, NULL), "arg 8");
    int from = 0;
    double t0 = now_ms();
    for (int t = 0; t < rows - 1; t += pyramid) {
        int iteration = pyramid < rows - t - 1 ? pyramid : rows - t - 1;
        CHECK(clSetKernelArg(kernel, 0, sizeof(int), &iteration), "arg 0");
        CHECK(clSetKernelArg(kernel, 2, sizeof(cl_mem), &d_rows[from]), "arg 2");
        CHECK(clSetKernelArg(kernel, 3, sizeof(cl_mem), &d_rows[1 - from]), "arg 3");
        CHECK(clSetKernelArg(kernel, 5, sizeof(int), &t), "arg 5");
        CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL), "launch");
        from = 1 - from;
    }
    CHECK(clFinish(queue), "clFinish");
    fprintf(stderr, "device section: %.1f ms\n", now_ms() - t0);
    CHECK(clEnqueueReadBuffer(queue, d_rows[from], CL_TRUE, 0, row_bytes, out, 0, NULL, NULL), "read");

    int *prev = malloc(row_bytes), *cur = malloc(row_bytes);
    for (int c = 0; c < cols; c++)
        prev[c] = data[c];
    for (int r = 1; r < rows; r++) {
        for (int c = 0; c < cols; c++) {
            int w = c > 0 ? prev[c - 1] : prev[c], e = c < cols - 1 ? prev[c + 1] : prev[c];
            cur[c] = data[(size_t)r * cols + c] + min3(w, prev[c], e);
        }
        int *swap = prev; prev = cur; cur = swap;
    }
    int mismatches = 0;
    for (int c = 0; c < cols; c++)
        if (out[c] != prev[c])
            mismatches++;
    printf("pathfinder cols=%d rows=%d pyramid=%d (cost %d): %d mismatches\n", cols, rows, pyramid,
           out[0], mismatches);

    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseMemObject(d_wall);
    clReleaseMemObject(d_rows[0]);
    clReleaseMemObject(d_rows[1]);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(data); free(out); free(prev); free(cur);
    return mismatches != 0;
}

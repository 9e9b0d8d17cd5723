/* A wavefront over a score matrix: one launch per anti-diagonal, the
   diagonal index a scalar argument changing at every launch, the matrix
   staying on the device throughout (as Needleman-Wunsch codes run).
   Checked against the CPU. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
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

static int max2(int a, int b) { return a > b ? a : b; }

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    int cols = argc > 1 ? atoi(argv[1]) : 2048;
    int steps = argc > 2 ? atoi(argv[2]) : 500;
    int penalty = 10;
    size_t cells = (size_t)cols * cols, bytes = cells * sizeof(int);
    int *score = calloc(cells, sizeof(int)), *match = malloc(bytes), *ref = malloc(bytes);
    for (size_t i = 0; i < cells; i++)
        match[i] = (int)((i * 2654435761u) % 21) - 10;
    for (int i = 0; i < cols; i++) {
        score[(size_t)i * cols] = -i * penalty;
        score[i] = -i * penalty;
    }

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err, "clCreateCommandQueue");
    cl_mem d_score = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, score, &err);
    CHECK(err, "clCreateBuffer score");
    cl_mem d_match = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, match, &err);
    CHECK(err, "clCreateBuffer match");

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
    cl_kernel kernel = clCreateKernel(program, "diagonal", &err);
    CHECK(err, "clCreateKernel");
    CHECK(clSetKernelArg(kernel, 0, sizeof(cl_mem), &d_score), "arg 0");
    CHECK(clSetKernelArg(kernel, 1, sizeof(cl_mem), &d_match), "arg 1");
    CHECK(clSetKernelArg(kernel, 2, sizeof(int), &cols), "arg 2");
    CHECK(clSetKernelArg(kernel, 4, sizeof(int), &penalty), "arg 4");
    size_t local = 64, global = ((size_t)cols + 63) / 64 * 64;
    double t0 = now_ms();
    for (int d = 1; d <= steps; d++) {
        CHECK(clSetKernelArg(kernel, 3, sizeof(int), &d), "arg 3");
        CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL), "launch");
    }
    CHECK(clFinish(queue), "clFinish");
    int *out = malloc(bytes);
    CHECK(clEnqueueReadBuffer(queue, d_score, CL_TRUE, 0, bytes, out, 0, NULL, NULL), "read score");
    printf("device section: %.1f ms\n", now_ms() - t0);

    for (size_t i = 0; i < cells; i++)
        ref[i] = score[i];
    for (int d = 1; d <= steps; d++)
        for (int i = 1; i < cols; i++) {
            int j = d - i + 1;
            if (j < 1 || j >= cols)
                continue;
            size_t at = (size_t)i * cols + j;
            ref[at] = max2(ref[at - cols - 1] + match[at], max2(ref[at - cols] - penalty, ref[at - 1] - penalty));
        }
    int mismatches = 0;
    for (size_t i = 0; i < cells; i++)
        if (out[i] != ref[i])
            mismatches++;
    printf("wavefront cols=%d steps=%d: %d mismatches\n", cols, steps, mismatches);
    return mismatches != 0;
}

/* Correlation matrix of n samples of m variables: ./correlation M N. */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
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

static cl_program build(cl_context context, cl_device_id device, const char *path, const char *options)
{
    cl_int err;
    size_t len;
    char *source = read_file(path, &len);
    cl_program program = clCreateProgramWithSource(context, 1, (const char **)&source, &len, &err);
    CHECK(err, "clCreateProgramWithSource");
    free(source);
    err = clBuildProgram(program, 1, &device, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[8192];
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build failed:\n%s\n", log);
        exit(2);
    }
    return program;
}

static int differs(float got, float want)
{
    return fabsf(got - want) > 1e-3f * fmaxf(1.0f, fabsf(want));
}

/* Wall-clock milliseconds, for the device section's time. */
static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static cl_context context;
static cl_command_queue queue;
static cl_device_id device;

static void setup(void)
{
    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err, "clCreateCommandQueue");
}

static cl_mem buffer(cl_mem_flags flags, size_t bytes, void *host)
{
    cl_int err;
    cl_mem m = clCreateBuffer(context, flags, bytes, host, &err);
    CHECK(err, "clCreateBuffer");
    return m;
}

static size_t round_up(int n, size_t m)
{
    return ((size_t)n + m - 1) / m * m;
}

int main(int argc, char **argv)
{
    int m = argc > 1 ? atoi(argv[1]) : 48;
    int n = argc > 2 ? atoi(argv[2]) : 40;
    float *data = malloc(sizeof(float) * n * m), *ref = malloc(sizeof(float) * n * m);
    float *symmat = malloc(sizeof(float) * m * m), *rsym = malloc(sizeof(float) * m * m);
    float *mean = malloc(sizeof(float) * m), *stddev = malloc(sizeof(float) * m);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            data[i * m + j] = ref[i * m + j] = (float)((i * j + 3 * i + j) % 13) / 4.0f;

    setup();
    cl_mem d_data = buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(float) * n * m, data);
    cl_mem d_mean = buffer(CL_MEM_READ_WRITE, sizeof(float) * m, NULL);
    cl_mem d_std = buffer(CL_MEM_READ_WRITE, sizeof(float) * m, NULL);
    cl_mem d_sym = buffer(CL_MEM_WRITE_ONLY, sizeof(float) * m * m, NULL);

    cl_int err;
    cl_program program = build(context, device, "kernel.cl", NULL);
    const char *names[4] = {"corr_mean", "corr_std", "corr_reduce", "corr_corr"};
    cl_kernel k[4];
    for (int q = 0; q < 4; q++) {
        k[q] = clCreateKernel(program, names[q], &err);
        CHECK(err, names[q]);
    }
    CHECK(clSetKernelArg(k[0], 0, sizeof(cl_mem), &d_data), "arg");
    CHECK(clSetKernelArg(k[0], 1, sizeof(cl_mem), &d_mean), "arg");
    CHECK(clSetKernelArg(k[0], 2, sizeof(int), &m), "arg");
    CHECK(clSetKernelArg(k[0], 3, sizeof(int), &n), "arg");
    CHECK(clSetKernelArg(k[1], 0, sizeof(cl_mem), &d_data), "arg");
    CHECK(clSetKernelArg(k[1], 1, sizeof(cl_mem), &d_mean), "arg");
    CHECK(clSetKernelArg(k[1], 2, sizeof(cl_mem), &d_std), "arg");
    CHECK(clSetKernelArg(k[1], 3, sizeof(int), &m), "arg");
    CHECK(clSetKernelArg(k[1], 4, sizeof(int), &n), "arg");
    CHECK(clSetKernelArg(k[2], 0, sizeof(cl_mem), &d_data), "arg");
    CHECK(clSetKernelArg(k[2], 1, sizeof(cl_mem), &d_mean), "arg");
    CHECK(clSetKernelArg(k[2], 2, sizeof(cl_mem), &d_std), "arg");
    CHECK(clSetKernelArg(k[2], 3, sizeof(int), &m), "arg");
    CHECK(clSetKernelArg(k[2], 4, sizeof(int), &n), "arg");
    CHECK(clSetKernelArg(k[3], 0, sizeof(cl_mem), &d_data), "arg");
    CHECK(clSetKernelArg(k[3], 1, sizeof(cl_mem), &d_sym), "arg");
    CHECK(clSetKernelArg(k[3], 2, sizeof(int), &m), "arg");
    CHECK(clSetKernelArg(k[3], 3, sizeof(int), &n), "arg");

    size_t local1[2] = {16, 1}, global1[2] = {round_up(m, 16), 1};
    size_t local2[2] = {16, 8}, global2[2] = {round_up(m, 16), round_up(n, 8)};
    double t0 = now_ms();
    CHECK(clEnqueueNDRangeKernel(queue, k[0], 2, NULL, global1, local1, 0, NULL, NULL), "launch mean");
    CHECK(clEnqueueNDRangeKernel(queue, k[1], 2, NULL, global1, local1, 0, NULL, NULL), "launch std");
    CHECK(clEnqueueNDRangeKernel(queue, k[2], 2, NULL, global2, local2, 0, NULL, NULL), "launch reduce");
    CHECK(clEnqueueNDRangeKernel(queue, k[3], 2, NULL, global1, local1, 0, NULL, NULL), "launch corr");
    CHECK(clFinish(queue), "clFinish");
    printf("device section: %.1f ms\n", now_ms() - t0);
    CHECK(clEnqueueReadBuffer(queue, d_sym, CL_TRUE, 0, sizeof(float) * m * m, symmat, 0, NULL, NULL), "read");

    for (int j = 0; j < m; j++) {
        float s = 0.0f;
        for (int i = 0; i < n; i++)
            s += ref[i * m + j];
        mean[j] = s / (float)n;
        s = 0.0f;
        for (int i = 0; i < n; i++)
            s += (ref[i * m + j] - mean[j]) * (ref[i * m + j] - mean[j]);
        s = sqrtf(s / (float)n);
        stddev[j] = s <= 0.1f ? 1.0f : s;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            ref[i * m + j] = (ref[i * m + j] - mean[j]) / (sqrtf((float)n) * stddev[j]);
    for (int j1 = 0; j1 < m; j1++)
        for (int j2 = 0; j2 < m; j2++) {
            float s = 0.0f;
            for (int i = 0; i < n; i++)
                s += ref[i * m + j1] * ref[i * m + j2];
            rsym[j1 * m + j2] = s;
        }
    int mismatches = 0;
    for (int i = 0; i < m * m; i++)
        if (differs(symmat[i], rsym[i]))
            mismatches++;
    printf("correlation m=%d n=%d: %d mismatches\n", m, n, mismatches);

    for (int q = 0; q < 4; q++)
        clReleaseKernel(k[q]);
    clReleaseProgram(program);
    clReleaseMemObject(d_data);
    clReleaseMemObject(d_mean);
    clReleaseMemObject(d_std);
    clReleaseMemObject(d_sym);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(data); free(ref); free(symmat); free(rsym); free(mean); free(stddev);
    return mismatches ? 1 : 0;
}

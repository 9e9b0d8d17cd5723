/* 3-D convolution launched once per interior plane: ./conv3d N
   (an N x N x N grid, N-2 launches). */
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

static cl_kernel kernel(cl_program program, const char *name)
{
    cl_int err;
    cl_kernel k = clCreateKernel(program, name, &err);
    CHECK(err, name);
    return k;
}

static size_t round_up(int n, size_t m)
{
    return ((size_t)n + m - 1) / m * m;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 256;
    int ni = n, nj = n, nk = n;
    size_t count = (size_t)ni * nj * nk, bytes = sizeof(float) * count;
    float *a = malloc(bytes), *b = calloc(count, sizeof(float)), *ref = calloc(count, sizeof(float));
    for (size_t p = 0; p < count; p++)
        a[p] = (float)(p % 29) / 29.0f;

    setup();
    cl_mem d_a = buffer(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, a);
    cl_mem d_b = buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, b);
    cl_program program = build(context, device, "kernel.cl", NULL);
    cl_kernel k_conv = kernel(program, "conv3d");
    CHECK(clSetKernelArg(k_conv, 0, sizeof(cl_mem), &d_a), "arg");
    CHECK(clSetKernelArg(k_conv, 1, sizeof(cl_mem), &d_b), "arg");
    CHECK(clSetKernelArg(k_conv, 2, sizeof(int), &ni), "arg");
    CHECK(clSetKernelArg(k_conv, 3, sizeof(int), &nj), "arg");
    CHECK(clSetKernelArg(k_conv, 4, sizeof(int), &nk), "arg");

    size_t local[2] = {32, 8};
    size_t global[2] = {round_up(nk, 32), round_up(nj, 8)};
    double t0 = now_ms();
    for (int i = 1; i < ni - 1; i++) {
        CHECK(clSetKernelArg(k_conv, 5, sizeof(int), &i), "arg i");
        CHECK(clEnqueueNDRangeKernel(queue, k_conv, 2, NULL, global, local, 0, NULL, NULL), "launch");
    }
    CHECK(clFinish(queue), "clFinish");
    printf("device section: %.1f ms\n", now_ms() - t0);
    CHECK(clEnqueueReadBuffer(queue, d_b, CL_TRUE, 0, bytes, b, 0, NULL, NULL), "read b");

    for (int i = 1; i < ni - 1; i++)
        for (int j = 1; j < nj - 1; j++)
            for (int k = 1; k < nk - 1; k++) {
                float s = 0.0f;
                for (int di = -1; di <= 1; di++)
                    for (int dj = -1; dj <= 1; dj++)
                        for (int dk = -1; dk <= 1; dk++) {
                            float w = 0.1f * (float)(di + 2) + 0.01f * (float)(dj + 2) + 0.001f * (float)(dk + 2);
                            s += w * a[(size_t)(i + di) * nj * nk + (size_t)(j + dj) * nk + (k + dk)];
                        }
                ref[(size_t)i * nj * nk + (size_t)j * nk + k] = s;
            }
    int mismatches = 0;
    for (size_t p = 0; p < count; p++)
        if (differs(b[p], ref[p]))
            mismatches++;
    printf("conv3d %dx%dx%d launches=%d: %d mismatches\n", ni, nj, nk, ni - 2, mismatches);

    clReleaseKernel(k_conv);
    clReleaseProgram(program);
    clReleaseMemObject(d_a);
    clReleaseMemObject(d_b);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(a); free(b); free(ref);
    return mismatches ? 1 : 0;
}

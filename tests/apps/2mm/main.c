/* Two chained matrix products through a temporary buffer:
   tmp = A * B, D = tmp * C. ./2mm NI NJ NK NL. */
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

static void matmul(const float *a, const float *b, float *c, int ni, int nj, int nk)
{
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++) {
            float acc = 0.0f;
            for (int k = 0; k < nk; k++)
                acc += a[i * nk + k] * b[k * nj + j];
            c[i * nj + j] = acc;
        }
}

int main(int argc, char **argv)
{
    int ni = argc > 1 ? atoi(argv[1]) : 64;
    int nj = argc > 2 ? atoi(argv[2]) : 48;
    int nk = argc > 3 ? atoi(argv[3]) : 40;
    int nl = argc > 4 ? atoi(argv[4]) : 56;
    float *a = malloc(sizeof(float) * ni * nk), *b = malloc(sizeof(float) * nk * nj);
    float *c = malloc(sizeof(float) * nj * nl), *d = malloc(sizeof(float) * ni * nl);
    float *tmp = malloc(sizeof(float) * ni * nj), *ref = malloc(sizeof(float) * ni * nl);
    for (int i = 0; i < ni * nk; i++) a[i] = (float)(i % 19) / 19.0f;
    for (int i = 0; i < nk * nj; i++) b[i] = (float)(i % 23) / 23.0f - 0.5f;
    for (int i = 0; i < nj * nl; i++) c[i] = (float)(i % 11) / 11.0f;

    setup();
    cl_mem d_a = buffer(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(float) * ni * nk, a);
    cl_mem d_b = buffer(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(float) * nk * nj, b);
    cl_mem d_c = buffer(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(float) * nj * nl, c);
    cl_mem d_tmp = buffer(CL_MEM_READ_WRITE, sizeof(float) * ni * nj, NULL);
    cl_mem d_d = buffer(CL_MEM_WRITE_ONLY, sizeof(float) * ni * nl, NULL);

    cl_int err;
    cl_program program = build(context, device, "kernel.cl", NULL);
    cl_kernel k1 = clCreateKernel(program, "mm", &err);
    CHECK(err, "clCreateKernel");
    cl_kernel k2 = clCreateKernel(program, "mm", &err);
    CHECK(err, "clCreateKernel");
    CHECK(clSetKernelArg(k1, 0, sizeof(cl_mem), &d_a), "arg");
    CHECK(clSetKernelArg(k1, 1, sizeof(cl_mem), &d_b), "arg");
    CHECK(clSetKernelArg(k1, 2, sizeof(cl_mem), &d_tmp), "arg");
    CHECK(clSetKernelArg(k1, 3, sizeof(int), &ni), "arg");
    CHECK(clSetKernelArg(k1, 4, sizeof(int), &nj), "arg");
    CHECK(clSetKernelArg(k1, 5, sizeof(int), &nk), "arg");
    CHECK(clSetKernelArg(k2, 0, sizeof(cl_mem), &d_tmp), "arg");
    CHECK(clSetKernelArg(k2, 1, sizeof(cl_mem), &d_c), "arg");
    CHECK(clSetKernelArg(k2, 2, sizeof(cl_mem), &d_d), "arg");
    CHECK(clSetKernelArg(k2, 3, sizeof(int), &ni), "arg");
    CHECK(clSetKernelArg(k2, 4, sizeof(int), &nl), "arg");
    CHECK(clSetKernelArg(k2, 5, sizeof(int), &nj), "arg");

    size_t local[2] = {16, 16};
    size_t global1[2] = {round_up(nj, 16), round_up(ni, 16)};
    size_t global2[2] = {round_up(nl, 16), round_up(ni, 16)};
    double t0 = now_ms();
    CHECK(clEnqueueNDRangeKernel(queue, k1, 2, NULL, global1, local, 0, NULL, NULL), "launch 1");
    CHECK(clEnqueueNDRangeKernel(queue, k2, 2, NULL, global2, local, 0, NULL, NULL), "launch 2");
    CHECK(clFinish(queue), "clFinish");
    printf("device section: %.1f ms\n", now_ms() - t0);
    CHECK(clEnqueueReadBuffer(queue, d_d, CL_TRUE, 0, sizeof(float) * ni * nl, d, 0, NULL, NULL), "read d");

    matmul(a, b, tmp, ni, nj, nk);
    matmul(tmp, c, ref, ni, nl, nj);
    int mismatches = 0;
    for (int i = 0; i < ni * nl; i++)
        if (differs(d[i], ref[i]))
            mismatches++;
    printf("2mm %dx%dx%dx%d: %d mismatches\n", ni, nj, nk, nl, mismatches);

    clReleaseKernel(k1);
    clReleaseKernel(k2);
    clReleaseProgram(program);
    clReleaseMemObject(d_a);
    clReleaseMemObject(d_b);
    clReleaseMemObject(d_c);
    clReleaseMemObject(d_tmp);
    clReleaseMemObject(d_d);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(a); free(b); free(c); free(d); free(tmp); free(ref);
    return mismatches ? 1 : 0;
}

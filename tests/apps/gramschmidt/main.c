/* Gram-Schmidt QR decomposition: ./gramschmidt M N. Three launches per
   column k (the last column has no update): 3n - 1 launches. */
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
    int m = argc > 1 ? atoi(argv[1]) : 640;
    int n = argc > 2 ? atoi(argv[2]) : 640;
    size_t bytes = sizeof(float) * m * n, rbytes = sizeof(float) * n * n;
    float *a = malloc(bytes), *q = malloc(bytes), *r = calloc((size_t)n * n, sizeof(float));
    float *ra = malloc(bytes), *rq = malloc(bytes), *rr = calloc((size_t)n * n, sizeof(float));
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            a[i * n + j] = ra[i * n + j] = (i == j ? 4.0f : 0.0f) + (float)((i * 5 + j * 3) % 13) / 13.0f;

    setup();
    cl_mem d_a = buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, a);
    cl_mem d_r = buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, rbytes, r);
    cl_mem d_q = buffer(CL_MEM_READ_WRITE, bytes, NULL);
    cl_program program = build(context, device, "kernel.cl", NULL);
    cl_kernel k_norm = kernel(program, "gs_norm");
    cl_kernel k_normalize = kernel(program, "gs_normalize");
    cl_kernel k_update = kernel(program, "gs_update");
    CHECK(clSetKernelArg(k_norm, 0, sizeof(cl_mem), &d_a), "arg");
    CHECK(clSetKernelArg(k_norm, 1, sizeof(cl_mem), &d_r), "arg");
    CHECK(clSetKernelArg(k_norm, 2, sizeof(int), &m), "arg");
    CHECK(clSetKernelArg(k_norm, 3, sizeof(int), &n), "arg");
    CHECK(clSetKernelArg(k_normalize, 0, sizeof(cl_mem), &d_a), "arg");
    CHECK(clSetKernelArg(k_normalize, 1, sizeof(cl_mem), &d_r), "arg");
    CHECK(clSetKernelArg(k_normalize, 2, sizeof(cl_mem), &d_q), "arg");
    CHECK(clSetKernelArg(k_normalize, 3, sizeof(int), &m), "arg");
    CHECK(clSetKernelArg(k_normalize, 4, sizeof(int), &n), "arg");
    CHECK(clSetKernelArg(k_update, 0, sizeof(cl_mem), &d_a), "arg");
    CHECK(clSetKernelArg(k_update, 1, sizeof(cl_mem), &d_r), "arg");
    CHECK(clSetKernelArg(k_update, 2, sizeof(cl_mem), &d_q), "arg");
    CHECK(clSetKernelArg(k_update, 3, sizeof(int), &m), "arg");
    CHECK(clSetKernelArg(k_update, 4, sizeof(int), &n), "arg");

    size_t one = 1, local = 64;
    size_t global_rows = round_up(m, local);
    double t0 = now_ms();
    for (int k = 0; k < n; k++) {
        CHECK(clSetKernelArg(k_norm, 4, sizeof(int), &k), "arg k");
        CHECK(clSetKernelArg(k_normalize, 5, sizeof(int), &k), "arg k");
        CHECK(clSetKernelArg(k_update, 5, sizeof(int), &k), "arg k");
        CHECK(clEnqueueNDRangeKernel(queue, k_norm, 1, NULL, &one, &one, 0, NULL, NULL), "launch norm");
        CHECK(clEnqueueNDRangeKernel(queue, k_normalize, 1, NULL, &global_rows, &local, 0, NULL, NULL), "launch normalize");
        if (k < n - 1) {
            size_t global_cols = round_up(n - k - 1, local);
            CHECK(clEnqueueNDRangeKernel(queue, k_update, 1, NULL, &global_cols, &local, 0, NULL, NULL), "launch update");
        }
    }
    CHECK(clFinish(queue), "clFinish");
    printf("device section: %.1f ms\n", now_ms() - t0);
    CHECK(clEnqueueReadBuffer(queue, d_a, CL_TRUE, 0, bytes, a, 0, NULL, NULL), "read a");
    CHECK(clEnqueueReadBuffer(queue, d_q, CL_TRUE, 0, bytes, q, 0, NULL, NULL), "read q");
    CHECK(clEnqueueReadBuffer(queue, d_r, CL_TRUE, 0, rbytes, r, 0, NULL, NULL), "read r");

    for (int k = 0; k < n; k++) {
        float nrm = 0.0f;
        for (int i = 0; i < m; i++)
            nrm += ra[i * n + k] * ra[i * n + k];
        rr[k * n + k] = sqrtf(nrm);
        for (int i = 0; i < m; i++)
            rq[i * n + k] = ra[i * n + k] / rr[k * n + k];
        for (int j = k + 1; j < n; j++) {
            float s = 0.0f;
            for (int i = 0; i < m; i++)
                s += rq[i * n + k] * ra[i * n + j];
            rr[k * n + j] = s;
            for (int i = 0; i < m; i++)
                ra[i * n + j] = ra[i * n + j] - rq[i * n + k] * s;
        }
    }
    int mismatches = 0;
    for (int i = 0; i < m * n; i++)
        mismatches += differs(a[i], ra[i]) + differs(q[i], rq[i]);
    for (int i = 0; i < n * n; i++)
        mismatches += differs(r[i], rr[i]);
    printf("gramschmidt %dx%d launches=%d: %d mismatches\n", m, n, 3 * n - 1, mismatches);

    clReleaseKernel(k_norm);
    clReleaseKernel(k_normalize);
    clReleaseKernel(k_update);
    clReleaseProgram(program);
    clReleaseMemObject(d_a);
    clReleaseMemObject(d_r);
    clReleaseMemObject(d_q);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(a); free(q); free(r); free(ra); free(rq); free(rr);
    return mismatches ? 1 : 0;
}

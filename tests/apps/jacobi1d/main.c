/* 1-D Jacobi with many tiny launches: ./jacobi1d N TSTEPS (two launches
   per step). */
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
    int n = argc > 1 ? atoi(argv[1]) : 4096;
    int tsteps = argc > 2 ? atoi(argv[2]) : 10000;
    size_t bytes = sizeof(float) * n;
    float *a = malloc(bytes), *b = malloc(bytes), *ra = malloc(bytes), *rb = malloc(bytes);
    for (int i = 0; i < n; i++) {
        a[i] = ra[i] = (float)((i * 7) % 23) / 23.0f;
        b[i] = rb[i] = 0.0f;
    }

    setup();
    cl_mem d_a = buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, a);
    cl_mem d_b = buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, b);
    cl_program program = build(context, device, "kernel.cl", NULL);
    cl_kernel k_avg = kernel(program, "jacobi1d_average");
    cl_kernel k_copy = kernel(program, "jacobi1d_copy");
    CHECK(clSetKernelArg(k_avg, 0, sizeof(cl_mem), &d_a), "arg");
    CHECK(clSetKernelArg(k_avg, 1, sizeof(cl_mem), &d_b), "arg");
    CHECK(clSetKernelArg(k_avg, 2, sizeof(int), &n), "arg");
    CHECK(clSetKernelArg(k_copy, 0, sizeof(cl_mem), &d_a), "arg");
    CHECK(clSetKernelArg(k_copy, 1, sizeof(cl_mem), &d_b), "arg");
    CHECK(clSetKernelArg(k_copy, 2, sizeof(int), &n), "arg");

    size_t local = 256, global = round_up(n, local);
    double t0 = now_ms();
    for (int t = 0; t < tsteps; t++) {
        CHECK(clEnqueueNDRangeKernel(queue, k_avg, 1, NULL, &global, &local, 0, NULL, NULL), "launch average");
        CHECK(clEnqueueNDRangeKernel(queue, k_copy, 1, NULL, &global, &local, 0, NULL, NULL), "launch copy");
    }
    CHECK(clFinish(queue), "clFinish");
    printf("device section: %.1f ms\n", now_ms() - t0);
    CHECK(clEnqueueReadBuffer(queue, d_a, CL_TRUE, 0, bytes, a, 0, NULL, NULL), "read a");

    for (int t = 0; t < tsteps; t++) {
        for (int i = 1; i < n - 1; i++)
            rb[i] = 0.33333f * (ra[i - 1] + ra[i] + ra[i + 1]);
        for (int i = 1; i < n - 1; i++)
            ra[i] = rb[i];
    }
    int mismatches = 0;
    for (int i = 0; i < n; i++)
        if (differs(a[i], ra[i]))
            mismatches++;
    printf("jacobi1d n=%d tsteps=%d launches=%d: %d mismatches\n", n, tsteps, 2 * tsteps, mismatches);

    clReleaseKernel(k_avg);
    clReleaseKernel(k_copy);
    clReleaseProgram(program);
    clReleaseMemObject(d_a);
    clReleaseMemObject(d_b);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(a); free(b); free(ra); free(rb);
    return mismatches ? 1 : 0;
}

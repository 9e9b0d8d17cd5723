/* ADI time steps, six kernels per step: ./adi N TSTEPS. */
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

static void reference(const float *a, float *b, float *x, int n, int tsteps)
{
    for (int t = 0; t < tsteps; t++) {
        for (int i = 0; i < n; i++)
            for (int j = 1; j < n; j++) {
                x[i * n + j] = x[i * n + j] - x[i * n + j - 1] * a[i * n + j] / b[i * n + j - 1];
                b[i * n + j] = b[i * n + j] - a[i * n + j] * a[i * n + j] / b[i * n + j - 1];
            }
        for (int i = 0; i < n; i++)
            x[i * n + n - 1] = x[i * n + n - 1] / b[i * n + n - 1];
        for (int i = 0; i < n; i++)
            for (int j = n - 2; j >= 1; j--)
                x[i * n + j] = (x[i * n + j] - x[i * n + j - 1] * a[i * n + j - 1]) / b[i * n + j];
        for (int i = 1; i < n; i++)
            for (int j = 0; j < n; j++) {
                x[i * n + j] = x[i * n + j] - x[(i - 1) * n + j] * a[i * n + j] / b[(i - 1) * n + j];
                b[i * n + j] = b[i * n + j] - a[i * n + j] * a[i * n + j] / b[(i - 1) * n + j];
            }
        for (int j = 0; j < n; j++)
            x[(n - 1) * n + j] = x[(n - 1) * n + j] / b[(n - 1) * n + j];
        for (int i = n - 2; i >= 1; i--)
            for (int j = 0; j < n; j++)
                x[i * n + j] = (x[i * n + j] - x[(i - 1) * n + j] * a[(i - 1) * n + j]) / b[i * n + j];
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 512;
    int tsteps = argc > 2 ? atoi(argv[2]) : 170;
    size_t bytes = sizeof(float) * n * n;
    float *a = malloc(bytes), *b = malloc(bytes), *x = malloc(bytes);
    float *rb = malloc(bytes), *rx = malloc(bytes);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            a[i * n + j] = (float)((i * 7 + j * 5) % 17) / 1700.0f;
            b[i * n + j] = rb[i * n + j] = 1.0f + (float)((i + j * 3) % 7) / 70.0f;
            x[i * n + j] = rx[i * n + j] = (float)((i * 3 + j) % 19) / 19.0f;
        }

    setup();
    cl_mem d_a = buffer(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, a);
    cl_mem d_b = buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, b);
    cl_mem d_x = buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, x);
    cl_program program = build(context, device, "kernel.cl", NULL);
    const char *names[6] = {"adi_row_forward", "adi_row_last", "adi_row_backward",
                            "adi_col_forward", "adi_col_last", "adi_col_backward"};
    cl_kernel k[6];
    for (int q = 0; q < 6; q++) {
        k[q] = kernel(program, names[q]);
        int arg = 0;
        if (q % 3 != 1)
            CHECK(clSetKernelArg(k[q], arg++, sizeof(cl_mem), &d_a), "arg a");
        CHECK(clSetKernelArg(k[q], arg++, sizeof(cl_mem), &d_b), "arg b");
        CHECK(clSetKernelArg(k[q], arg++, sizeof(cl_mem), &d_x), "arg x");
        CHECK(clSetKernelArg(k[q], arg, sizeof(int), &n), "arg n");
    }

    size_t local = 64, global = round_up(n, local);
    double t0 = now_ms();
    for (int t = 0; t < tsteps; t++)
        for (int q = 0; q < 6; q++)
            CHECK(clEnqueueNDRangeKernel(queue, k[q], 1, NULL, &global, &local, 0, NULL, NULL), names[q]);
    CHECK(clFinish(queue), "clFinish");
    printf("device section: %.1f ms\n", now_ms() - t0);
    CHECK(clEnqueueReadBuffer(queue, d_b, CL_TRUE, 0, bytes, b, 0, NULL, NULL), "read b");
    CHECK(clEnqueueReadBuffer(queue, d_x, CL_TRUE, 0, bytes, x, 0, NULL, NULL), "read x");

    reference(a, rb, rx, n, tsteps);
    int mismatches = 0;
    for (int i = 0; i < n * n; i++)
        mismatches += differs(b[i], rb[i]) + differs(x[i], rx[i]);
    printf("adi n=%d tsteps=%d launches=%d: %d mismatches\n", n, tsteps, 6 * tsteps, mismatches);

    for (int q = 0; q < 6; q++)
        clReleaseKernel(k[q]);
    clReleaseProgram(program);
    clReleaseMemObject(d_a);
    clReleaseMemObject(d_b);
    clReleaseMemObject(d_x);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(a); free(b); free(x); free(rb); free(rx);
    return mismatches ? 1 : 0;
}

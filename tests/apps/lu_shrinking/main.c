/* LU decomposition with an NDRange that shrinks per step: ./lu_shrinking N.
   Two launches per step k (n-1 steps), global size n-k-1 per dimension,
   local size left to the driver. */
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

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1024;
    size_t bytes = sizeof(float) * n * n;
    float *a = malloc(bytes), *ref = malloc(bytes);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            a[i * n + j] = ref[i * n + j] = (i == j) ? (float)n : (float)((i * 3 + j * 7) % 11) / 11.0f;

    setup();
    cl_mem d_a = buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, a);
    cl_program program = build(context, device, "kernel.cl", NULL);
    cl_kernel k_div = kernel(program, "lu_div");
    cl_kernel k_elim = kernel(program, "lu_elim");
    CHECK(clSetKernelArg(k_div, 0, sizeof(cl_mem), &d_a), "arg");
    CHECK(clSetKernelArg(k_div, 2, sizeof(int), &n), "arg");
    CHECK(clSetKernelArg(k_elim, 0, sizeof(cl_mem), &d_a), "arg");
    CHECK(clSetKernelArg(k_elim, 2, sizeof(int), &n), "arg");

    double t0 = now_ms();
    for (int k = 0; k < n - 1; k++) {
        size_t global1 = (size_t)(n - k - 1);
        size_t global2[2] = {(size_t)(n - k - 1), (size_t)(n - k - 1)};
        CHECK(clSetKernelArg(k_div, 1, sizeof(int), &k), "arg k");
        CHECK(clSetKernelArg(k_elim, 1, sizeof(int), &k), "arg k");
        CHECK(clEnqueueNDRangeKernel(queue, k_div, 1, NULL, &global1, NULL, 0, NULL, NULL), "launch div");
        CHECK(clEnqueueNDRangeKernel(queue, k_elim, 2, NULL, global2, NULL, 0, NULL, NULL), "launch elim");
    }
    CHECK(clFinish(queue), "clFinish");
    printf("device section: %.1f ms\n", now_ms() - t0);
    CHECK(clEnqueueReadBuffer(queue, d_a, CL_TRUE, 0, bytes, a, 0, NULL, NULL), "read a");

    for (int k = 0; k < n - 1; k++) {
        for (int j = k + 1; j < n; j++)
            ref[k * n + j] = ref[k * n + j] / ref[k * n + k];
        for (int i = k + 1; i < n; i++)
            for (int j = k + 1; j < n; j++)
                ref[i * n + j] = ref[i * n + j] - ref[i * n + k] * ref[k * n + j];
    }
    int mismatches = 0;
    for (int i = 0; i < n * n; i++)
        if (differs(a[i], ref[i]))
            mismatches++;
    printf("lu_shrinking n=%d launches=%d: %d mismatches\n", n, 2 * (n - 1), mismatches);

    clReleaseKernel(k_div);
    clReleaseKernel(k_elim);
    clReleaseProgram(program);
    clReleaseMemObject(d_a);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(a); free(ref);
    return mismatches ? 1 : 0;
}

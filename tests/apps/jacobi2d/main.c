/* 2-D Jacobi over T steps with ping-pong buffers: ./jacobi2d N T. */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <CL/cl.h>

#define CHECK(err, what) do { if ((err) != CL_SUCCESS) { \
    fprintf(stderr, "%s failed: %d\n", what, (int)(err)); exit(2); } } while (0)

/* Wall-clock milliseconds, for the device section's time. */
static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

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

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 96;
    int steps = argc > 2 ? atoi(argv[2]) : 8;
    size_t bytes = sizeof(float) * n * n;
    float *a = malloc(bytes), *b = malloc(bytes), *out = malloc(bytes);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            a[i * n + j] = b[i * n + j] = (float)((i * 7 + j * 3) % 17) / 4.0f;

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err, "clCreateCommandQueue");

    cl_mem d_a = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, a, &err);
    CHECK(err, "clCreateBuffer a");
    cl_mem d_b = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, b, &err);
    CHECK(err, "clCreateBuffer b");

    cl_program program = build(context, device, "kernel.cl", "-cl-mad-enable");
    cl_kernel kernel = clCreateKernel(program, "jacobi2d", &err);
    CHECK(err, "clCreateKernel");
    CHECK(clSetKernelArg(kernel, 2, sizeof(int), &n), "arg 2");

    size_t local[2] = {32, 8};
    size_t global[2] = {((size_t)n + 31) / 32 * 32, ((size_t)n + 7) / 8 * 8};
    double t0 = now_ms();
    for (int t = 0; t < steps; t++) {
        cl_mem from = t % 2 == 0 ? d_a : d_b;
        cl_mem to = t % 2 == 0 ? d_b : d_a;
        CHECK(clSetKernelArg(kernel, 0, sizeof(cl_mem), &from), "arg 0");
        CHECK(clSetKernelArg(kernel, 1, sizeof(cl_mem), &to), "arg 1");
        CHECK(clEnqueueNDRangeKernel(queue, kernel, 2, NULL, global, local, 0, NULL, NULL), "launch");
    }
    CHECK(clFinish(queue), "clFinish");
    printf("device section: %.1f ms\n", now_ms() - t0);
    cl_mem last = steps % 2 == 0 ? d_a : d_b;
    CHECK(clEnqueueReadBuffer(queue, last, CL_TRUE, 0, bytes, out, 0, NULL, NULL), "read");

    for (int t = 0; t < steps; t++) {
        float *from = t % 2 == 0 ? a : b;
        float *to = t % 2 == 0 ? b : a;
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                to[i * n + j] = 0.2f * (from[i * n + j] + from[i * n + j - 1] + from[i * n + j + 1]
                                        + from[(i - 1) * n + j] + from[(i + 1) * n + j]);
    }
    float *ref = steps % 2 == 0 ? a : b;
    int mismatches = 0;
    for (int i = 0; i < n * n; i++)
        if (differs(out[i], ref[i]))
            mismatches++;
    printf("jacobi2d n=%d steps=%d: %d mismatches\n", n, steps, mismatches);

    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseMemObject(d_a);
    clReleaseMemObject(d_b);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(a); free(b); free(out);
    return mismatches ? 1 : 0;
}

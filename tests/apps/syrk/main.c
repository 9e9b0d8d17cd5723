/* Symmetric rank-k update in one launch: ./syrk N M. */
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
    int n = argc > 1 ? atoi(argv[1]) : 1024;
    int m = argc > 2 ? atoi(argv[2]) : 1024;
    float alpha = 1.5f, beta = 0.5f;
    float *a = malloc(sizeof(float) * n * m);
    float *c = malloc(sizeof(float) * n * n), *ref = malloc(sizeof(float) * n * n);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < m; k++)
            a[i * m + k] = (float)((i * k + 2) % 19) / 19.0f;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            c[i * n + j] = ref[i * n + j] = (float)((i + j * 3) % 23) / 23.0f;

    setup();
    cl_mem d_a = buffer(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(float) * n * m, a);
    cl_mem d_c = buffer(CL_MEM_READ_WRITE, sizeof(float) * n * n, NULL);
    CHECK(clEnqueueWriteBuffer(queue, d_c, CL_TRUE, 0, sizeof(float) * n * n, c, 0, NULL, NULL), "write c");
    cl_program program = build(context, device, "kernel.cl", NULL);
    cl_kernel k_syrk = kernel(program, "syrk");
    CHECK(clSetKernelArg(k_syrk, 0, sizeof(cl_mem), &d_a), "arg");
    CHECK(clSetKernelArg(k_syrk, 1, sizeof(cl_mem), &d_c), "arg");
    CHECK(clSetKernelArg(k_syrk, 2, sizeof(float), &alpha), "arg");
    CHECK(clSetKernelArg(k_syrk, 3, sizeof(float), &beta), "arg");
    CHECK(clSetKernelArg(k_syrk, 4, sizeof(int), &n), "arg");
    CHECK(clSetKernelArg(k_syrk, 5, sizeof(int), &m), "arg");

    size_t local[2] = {16, 16};
    size_t global[2] = {round_up(n, 16), round_up(n, 16)};
    double t0 = now_ms();
    CHECK(clEnqueueNDRangeKernel(queue, k_syrk, 2, NULL, global, local, 0, NULL, NULL), "launch");
    CHECK(clFinish(queue), "clFinish");
    printf("device section: %.1f ms\n", now_ms() - t0);
    CHECK(clEnqueueReadBuffer(queue, d_c, CL_TRUE, 0, sizeof(float) * n * n, c, 0, NULL, NULL), "read c");

    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float acc = ref[i * n + j] * beta;
            for (int k = 0; k < m; k++)
                acc += alpha * a[i * m + k] * a[j * m + k];
            ref[i * n + j] = acc;
        }
    int mismatches = 0;
    for (int i = 0; i < n * n; i++)
        if (differs(c[i], ref[i]))
            mismatches++;
    printf("syrk n=%d m=%d: %d mismatches\n", n, m, mismatches);

    clReleaseKernel(k_syrk);
    clReleaseProgram(program);
    clReleaseMemObject(d_a);
    clReleaseMemObject(d_c);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(a); free(c); free(ref);
    return mismatches ? 1 : 0;
}

/* Three chained matrix products: E = A * B, F = C * D, G = E * F.
   ./3mm NI NJ NK NL NM (A ni x nk, B nk x nj, C nj x nm, D nm x nl). */
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

static void set_mm_args(cl_kernel k, cl_mem a, cl_mem b, cl_mem c, int ni, int nj, int nk)
{
    CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &a), "arg");
    CHECK(clSetKernelArg(k, 1, sizeof(cl_mem), &b), "arg");
    CHECK(clSetKernelArg(k, 2, sizeof(cl_mem), &c), "arg");
    CHECK(clSetKernelArg(k, 3, sizeof(int), &ni), "arg");
    CHECK(clSetKernelArg(k, 4, sizeof(int), &nj), "arg");
    CHECK(clSetKernelArg(k, 5, sizeof(int), &nk), "arg");
}

int main(int argc, char **argv)
{
    int ni = argc > 1 ? atoi(argv[1]) : 640;
    int nj = argc > 2 ? atoi(argv[2]) : 640;
    int nk = argc > 3 ? atoi(argv[3]) : 640;
    int nl = argc > 4 ? atoi(argv[4]) : 640;
    int nm = argc > 5 ? atoi(argv[5]) : 640;
    float *a = malloc(sizeof(float) * ni * nk), *b = malloc(sizeof(float) * nk * nj);
    float *c = malloc(sizeof(float) * nj * nm), *d = malloc(sizeof(float) * nm * nl);
    float *e = malloc(sizeof(float) * ni * nj), *f = malloc(sizeof(float) * nj * nl);
    float *g = malloc(sizeof(float) * ni * nl), *ref = malloc(sizeof(float) * ni * nl);
    for (int i = 0; i < ni * nk; i++) a[i] = (float)(i % 17) / 17.0f;
    for (int i = 0; i < nk * nj; i++) b[i] = (float)(i % 13) / 13.0f - 0.5f;
    for (int i = 0; i < nj * nm; i++) c[i] = (float)(i % 7) / 7.0f;
    for (int i = 0; i < nm * nl; i++) d[i] = (float)(i % 11) / 11.0f - 0.5f;

    setup();
    cl_mem d_a = buffer(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(float) * ni * nk, a);
    cl_mem d_b = buffer(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(float) * nk * nj, b);
    cl_mem d_c = buffer(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(float) * nj * nm, c);
    cl_mem d_d = buffer(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(float) * nm * nl, d);
    cl_mem d_e = buffer(CL_MEM_READ_WRITE, sizeof(float) * ni * nj, NULL);
    cl_mem d_f = buffer(CL_MEM_READ_WRITE, sizeof(float) * nj * nl, NULL);
    cl_mem d_g = buffer(CL_MEM_WRITE_ONLY, sizeof(float) * ni * nl, NULL);

    cl_program program = build(context, device, "kernel.cl", NULL);
    cl_kernel k1 = kernel(program, "mm"), k2 = kernel(program, "mm"), k3 = kernel(program, "mm");
    set_mm_args(k1, d_a, d_b, d_e, ni, nj, nk);
    set_mm_args(k2, d_c, d_d, d_f, nj, nl, nm);
    set_mm_args(k3, d_e, d_f, d_g, ni, nl, nj);

    size_t local[2] = {16, 16};
    size_t global1[2] = {round_up(nj, 16), round_up(ni, 16)};
    size_t global2[2] = {round_up(nl, 16), round_up(nj, 16)};
    size_t global3[2] = {round_up(nl, 16), round_up(ni, 16)};
    double t0 = now_ms();
    CHECK(clEnqueueNDRangeKernel(queue, k1, 2, NULL, global1, local, 0, NULL, NULL), "launch 1");
    CHECK(clEnqueueNDRangeKernel(queue, k2, 2, NULL, global2, local, 0, NULL, NULL), "launch 2");
    CHECK(clEnqueueNDRangeKernel(queue, k3, 2, NULL, global3, local, 0, NULL, NULL), "launch 3");
    CHECK(clFinish(queue), "clFinish");
    printf("device section: %.1f ms\n", now_ms() - t0);
    CHECK(clEnqueueReadBuffer(queue, d_g, CL_TRUE, 0, sizeof(float) * ni * nl, g, 0, NULL, NULL), "read g");

    matmul(a, b, e, ni, nj, nk);
    matmul(c, d, f, nj, nl, nm);
    matmul(e, f, ref, ni, nl, nj);
    int mismatches = 0;
    for (int i = 0; i < ni * nl; i++)
        if (differs(g[i], ref[i]))
            mismatches++;
    printf("3mm %dx%dx%dx%dx%d: %d mismatches\n", ni, nj, nk, nl, nm, mismatches);

    clReleaseKernel(k1);
    clReleaseKernel(k2);
    clReleaseKernel(k3);
    clReleaseProgram(program);
    clReleaseMemObject(d_a);
    clReleaseMemObject(d_b);
    clReleaseMemObject(d_c);
    clReleaseMemObject(d_d);
    clReleaseMemObject(d_e);
    clReleaseMemObject(d_f);
    clReleaseMemObject(d_g);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(a); free(b); free(c); free(d); free(e); free(f); free(g); free(ref);
    return mismatches ? 1 : 0;
}

/* gemm with run-time sizes: ./gemm NI NJ NK. */
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

int main(int argc, char **argv)
{
    int ni = argc > 1 ? atoi(argv[1]) : 100;
    int nj = argc > 2 ? atoi(argv[2]) : 90;
    int nk = argc > 3 ? atoi(argv[3]) : 70;
    float alpha = 1.5f, beta = 0.5f;
    float *a = malloc(sizeof(float) * ni * nk);
    float *b = malloc(sizeof(float) * nk * nj);
    float *c = malloc(sizeof(float) * ni * nj);
    float *ref = malloc(sizeof(float) * ni * nj);
    for (int i = 0; i < ni; i++)
        for (int k = 0; k < nk; k++)
            a[i * nk + k] = (float)((i * k + 1) % ni) / ni;
    for (int k = 0; k < nk; k++)
        for (int j = 0; j < nj; j++)
            b[k * nj + j] = (float)((k * (j + 1)) % nj) / nj;
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++)
            c[i * nj + j] = ref[i * nj + j] = (float)((i * (j + 2)) % nj) / ni;

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err, "clCreateCommandQueue");

    cl_mem d_a = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(float) * ni * nk, a, &err);
    CHECK(err, "clCreateBuffer a");
    cl_mem d_b = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(float) * nk * nj, b, &err);
    CHECK(err, "clCreateBuffer b");
    cl_mem d_c = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(float) * ni * nj, NULL, &err);
    CHECK(err, "clCreateBuffer c");
    CHECK(clEnqueueWriteBuffer(queue, d_c, CL_TRUE, 0, sizeof(float) * ni * nj, c, 0, NULL, NULL), "write c");

    cl_program program = build(context, device, "kernel.cl", NULL);
    cl_kernel kernel = clCreateKernel(program, "gemm", &err);
    CHECK(err, "clCreateKernel");
    CHECK(clSetKernelArg(kernel, 0, sizeof(cl_mem), &d_a), "arg 0");
    CHECK(clSetKernelArg(kernel, 1, sizeof(cl_mem), &d_b), "arg 1");
    CHECK(clSetKernelArg(kernel, 2, sizeof(cl_mem), &d_c), "arg 2");
    CHECK(clSetKernelArg(kernel, 3, sizeof(float), &alpha), "arg 3");
    CHECK(clSetKernelArg(kernel, 4, sizeof(float), &beta), "arg 4");
    CHECK(clSetKernelArg(kernel, 5, sizeof(int), &ni), "arg 5");
    CHECK(clSetKernelArg(kernel, 6, sizeof(int), &nj), "arg 6");
    CHECK(clSetKernelArg(kernel, 7, sizeof(int), &nk), "arg 7");

    size_t local[2] = {16, 16};
    size_t global[2] = {((size_t)nj + 15) / 16 * 16, ((size_t)ni + 15) / 16 * 16};
    double t0 = now_ms();
    CHECK(clEnqueueNDRangeKernel(queue, kernel, 2, NULL, global, local, 0, NULL, NULL), "launch");
    CHECK(clFinish(queue), "clFinish");
    printf("device section: %.1f ms\n", now_ms() - t0);
    CHECK(clEnqueueReadBuffer(queue, d_c, CL_TRUE, 0, sizeof(float) * ni * nj, c, 0, NULL, NULL), "read c");

    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++) {
            float acc = ref[i * nj + j] * beta;
            for (int k = 0; k < nk; k++)
                acc += alpha * a[i * nk + k] * b[k * nj + j];
            ref[i * nj + j] = acc;
        }
    int mismatches = 0;
    for (int i = 0; i < ni * nj; i++)
        if (differs(c[i], ref[i]))
            mismatches++;
    printf("gemm %dx%dx%d: %d mismatches\n", ni, nj, nk, mismatches);

    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseMemObject(d_a);
    clReleaseMemObject(d_b);
    clReleaseMemObject(d_c);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(a); free(b); free(c); free(ref);
    return mismatches ? 1 : 0;
}

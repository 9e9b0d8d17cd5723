/* Tiled matrix product with __local arguments and barriers: ./matmul_tiled N
   (N a multiple of 16). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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


int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 64;
    if (n % 16) {
        fprintf(stderr, "N must be a multiple of 16\n");
        return 2;
    }
    size_t bytes = sizeof(float) * n * n;
    float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
    for (int i = 0; i < n * n; i++) {
        a[i] = (float)(i % 17) / 17.0f;
        b[i] = (float)(i % 13) / 13.0f - 0.5f;
    }
    setup();
    cl_mem d_a = buffer(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, a);
    cl_mem d_b = buffer(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, b);
    cl_mem d_c = buffer(CL_MEM_WRITE_ONLY, bytes, NULL);
    cl_int err;
    cl_program program = build(context, device, "kernel.cl", NULL);
    cl_kernel kernel = clCreateKernel(program, "matmul_tiled", &err);
    CHECK(err, "clCreateKernel");
    CHECK(clSetKernelArg(kernel, 0, sizeof(cl_mem), &d_a), "arg");
    CHECK(clSetKernelArg(kernel, 1, sizeof(cl_mem), &d_b), "arg");
    CHECK(clSetKernelArg(kernel, 2, sizeof(cl_mem), &d_c), "arg");
    CHECK(clSetKernelArg(kernel, 3, sizeof(float) * 16 * 16, NULL), "arg");
    CHECK(clSetKernelArg(kernel, 4, sizeof(float) * 16 * 16, NULL), "arg");
    CHECK(clSetKernelArg(kernel, 5, sizeof(int), &n), "arg");
    size_t global[2] = {(size_t)n, (size_t)n}, local[2] = {16, 16};
    CHECK(clEnqueueNDRangeKernel(queue, kernel, 2, NULL, global, local, 0, NULL, NULL), "launch");
    CHECK(clEnqueueReadBuffer(queue, d_c, CL_TRUE, 0, bytes, c, 0, NULL, NULL), "read c");
    int mismatches = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int k = 0; k < n; k++)
                acc += a[i * n + k] * b[k * n + j];
            if (differs(c[i * n + j], acc))
                mismatches++;
        }
    printf("matmul_tiled n=%d: %d mismatches\n", n, mismatches);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseMemObject(d_a);
    clReleaseMemObject(d_b);
    clReleaseMemObject(d_c);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(a); free(b); free(c);
    return mismatches ? 1 : 0;
}

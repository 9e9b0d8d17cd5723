/* Aliased kernel arguments, as host codes pass them: one buffer as both
   the input and the output of an elementwise kernel, and two sub-buffers
   of one buffer as a kernel's input and output. Checked against the CPU;
   prints a hash of the results. */
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

static unsigned long hash(const float *v, int n)
{
    unsigned long h = 1469598103934665603UL;
    const unsigned char *b = (const unsigned char *)v;
    for (size_t i = 0; i < (size_t)n * sizeof(float); i++)
        h = (h ^ b[i]) * 1099511628211UL;
    return h;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 8192; /* a multiple of 1024 */
    size_t bytes = (size_t)n * sizeof(float);
    float *v = malloc(2 * bytes), *got = malloc(2 * bytes), *want = malloc(2 * bytes);
    for (int i = 0; i < 2 * n; i++)
        v[i] = (float)(i % 97) * 0.25f - 5.0f;

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err, "clCreateCommandQueue");
    cl_mem buf = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 2 * bytes, v, &err);
    CHECK(err, "clCreateBuffer");
    cl_buffer_region lo = {0, bytes}, hi = {bytes, bytes};
    cl_mem first = clCreateSubBuffer(buf, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &lo, &err);
    CHECK(err, "clCreateSubBuffer first");
    cl_mem second = clCreateSubBuffer(buf, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &hi, &err);
    CHECK(err, "clCreateSubBuffer second");

    size_t len;
    char *source = read_file("kernel.cl", &len);
    cl_program program = clCreateProgramWithSource(context, 1, (const char **)&source, &len, &err);
    CHECK(err, "clCreateProgramWithSource");
    err = clBuildProgram(program, 1, &device, "", NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[4096];
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build failed:\n%s\n", log);
        return 2;
    }
    cl_kernel axpy = clCreateKernel(program, "axpy", &err);
    CHECK(err, "clCreateKernel axpy");
    cl_kernel pair = clCreateKernel(program, "pair_sum", &err);
    CHECK(err, "clCreateKernel pair_sum");
    float a = 1.5f;
    int whole = 2 * n;
    size_t local = 64, g_whole = (size_t)whole, g_half = (size_t)n;
    /* 1. y = a*y + y over the whole buffer, passed twice */
    CHECK(clSetKernelArg(axpy, 0, sizeof(cl_mem), &buf), "axpy 0");
    CHECK(clSetKernelArg(axpy, 1, sizeof(cl_mem), &buf), "axpy 1");
    CHECK(clSetKernelArg(axpy, 2, sizeof(float), &a), "axpy 2");
    CHECK(clSetKernelArg(axpy, 3, sizeof(int), &whole), "axpy 3");
    CHECK(clEnqueueNDRangeKernel(queue, axpy, 1, NULL, &g_whole, &local, 0, NULL, NULL), "launch axpy");
    /* 2. second half = pair sums of the first half (sub-buffers of buf) */
    CHECK(clSetKernelArg(pair, 0, sizeof(cl_mem), &first), "pair 0");
    CHECK(clSetKernelArg(pair, 1, sizeof(cl_mem), &second), "pair 1");
    CHECK(clSetKernelArg(pair, 2, sizeof(int), &n), "pair 2");
    CHECK(clEnqueueNDRangeKernel(queue, pair, 1, NULL, &g_half, &local, 0, NULL, NULL), "launch pair_sum");
    /* 3. the first half again, x from the second half, y the first */
    CHECK(clSetKernelArg(axpy, 0, sizeof(cl_mem), &second), "axpy 0");
    CHECK(clSetKernelArg(axpy, 1, sizeof(cl_mem), &first), "axpy 1");
    CHECK(clSetKernelArg(axpy, 3, sizeof(int), &n), "axpy 3");
    CHECK(clEnqueueNDRangeKernel(queue, axpy, 1, NULL, &g_half, &local, 0, NULL, NULL), "launch axpy 2");
    CHECK(clFinish(queue), "clFinish");
    CHECK(clEnqueueReadBuffer(queue, buf, CL_TRUE, 0, 2 * bytes, got, 0, NULL, NULL), "read");

    for (int i = 0; i < 2 * n; i++)
        want[i] = a * v[i] + v[i];
    for (int i = 0; i < n; i++)
        want[n + i] = want[i] + want[(i + 1) % n];
    for (int i = 0; i < n; i++)
        want[i] = a * want[n + i] + want[i];
    int mismatches = 0;
    for (int i = 0; i < 2 * n; i++)
        if (got[i] != want[i])
            mismatches++;
    printf("result %016lx\n", hash(got, 2 * n));
    printf("aliased n=%d: %d mismatches\n", n, mismatches);

    clReleaseKernel(axpy);
    clReleaseKernel(pair);
    clReleaseProgram(program);
    clReleaseMemObject(first);
    clReleaseMemObject(second);
    clReleaseMemObject(buf);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(source); free(v); free(got); free(want);
    return mismatches != 0;
}

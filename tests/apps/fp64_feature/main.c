/* Two programs built without -cl-std, as most hosts build them: one whose
 * row sums take double or float as the device's OpenCL C features say, one
 * that writes the OpenCL C version it was compiled for. Prints a hash of
 * the sums, the version seen and the mismatch count of the versions
 * against the first one. */
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

static cl_program build(cl_context context, cl_device_id device, const char *path)
{
    cl_int err;
    size_t len;
    char *source = read_file(path, &len);
    cl_program p = clCreateProgramWithSource(context, 1, (const char **)&source, &len, &err);
    CHECK(err, "clCreateProgramWithSource");
    err = clBuildProgram(p, 1, &device, NULL, NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[4096];
        clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build of %s failed:\n%s\n", path, log);
        exit(2);
    }
    free(source);
    return p;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 512;
    size_t bytes = (size_t)n * n * sizeof(float);
    float *a = malloc(bytes), *out = malloc((size_t)n * sizeof(float));
    int *v = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n * n; i++)
        a[i] = (float)((i * 7919) % 1000) * 0.37f + 0.001f * (float)(i % 13);

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err, "clCreateCommandQueue");
    cl_mem da = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, a, &err);
    CHECK(err, "clCreateBuffer a");
    cl_mem dout = clCreateBuffer(context, CL_MEM_WRITE_ONLY, (size_t)n * sizeof(float), NULL, &err);
    CHECK(err, "clCreateBuffer out");
    cl_mem dv = clCreateBuffer(context, CL_MEM_WRITE_ONLY, (size_t)n * sizeof(int), NULL, &err);
    CHECK(err, "clCreateBuffer v");

    cl_program sums = build(context, device, "kernel.cl");
    cl_program version = build(context, device, "version.cl");
    cl_kernel ks = clCreateKernel(sums, "row_sum", &err);
    CHECK(err, "clCreateKernel row_sum");
    cl_kernel kv = clCreateKernel(version, "version", &err);
    CHECK(err, "clCreateKernel version");
    CHECK(clSetKernelArg(ks, 0, sizeof(cl_mem), &da), "arg 0");
    CHECK(clSetKernelArg(ks, 1, sizeof(cl_mem), &dout), "arg 1");
    CHECK(clSetKernelArg(ks, 2, sizeof(int), &n), "arg 2");
    CHECK(clSetKernelArg(kv, 0, sizeof(cl_mem), &dv), "arg 0");
    size_t global = (size_t)n, local = 16;
    CHECK(clEnqueueNDRangeKernel(queue, ks, 1, NULL, &global, &local, 0, NULL, NULL), "launch row_sum");
    CHECK(clEnqueueNDRangeKernel(queue, kv, 1, NULL, &global, &local, 0, NULL, NULL), "launch version");
    CHECK(clFinish(queue), "clFinish");
    CHECK(clEnqueueReadBuffer(queue, dout, CL_TRUE, 0, (size_t)n * sizeof(float), out, 0, NULL, NULL), "read out");
    CHECK(clEnqueueReadBuffer(queue, dv, CL_TRUE, 0, (size_t)n * sizeof(int), v, 0, NULL, NULL), "read v");

    unsigned long h = 1469598103934665603UL;
    const unsigned char *b = (const unsigned char *)out;
    for (size_t i = 0; i < (size_t)n * sizeof(float); i++)
        h = (h ^ b[i]) * 1099511628211UL;
    int mismatches = 0;
    for (int i = 0; i < n; i++)
        if (v[i] != v[0] + i % 3)
            mismatches++;
    printf("sums %016lx\nfirst sum %.3f\nOpenCL C version %d\n", h, out[0], v[0]);
    printf("fp64_feature n=%d: %d mismatches\n", n, mismatches);
    return mismatches != 0;
}

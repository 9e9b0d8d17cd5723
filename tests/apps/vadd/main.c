/* Vector add: c = a + b, checked against the CPU. */
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

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4096;
    size_t bytes = (size_t)n * sizeof(float);
    float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
    for (int i = 0; i < n; i++) {
        a[i] = (float)(i % 97) * 0.5f;
        b[i] = (float)(i % 13) - 3.0f;
        c[i] = -1.0f;
    }

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err, "clCreateCommandQueue");

    cl_mem d_a = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, a, &err);
    CHECK(err, "clCreateBuffer a");
    cl_mem d_b = clCreateBuffer(context, CL_MEM_READ_ONLY, bytes, NULL, &err);
    CHECK(err, "clCreateBuffer b");
    cl_mem d_c = clCreateBuffer(context, CL_MEM_WRITE_ONLY, bytes, NULL, &err);
    CHECK(err, "clCreateBuffer c");
    CHECK(clEnqueueWriteBuffer(queue, d_b, CL_TRUE, 0, bytes, b, 0, NULL, NULL), "write b");
    CHECK(clEnqueueWriteBuffer(queue, d_c, CL_TRUE, 0, bytes, c, 0, NULL, NULL), "write c");

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
    cl_kernel kernel = clCreateKernel(program, "vadd", &err);
    CHECK(err, "clCreateKernel");
    CHECK(clSetKernelArg(kernel, 0, sizeof(cl_mem), &d_a), "arg 0");
    CHECK(clSetKernelArg(kernel, 1, sizeof(cl_mem), &d_b), "arg 1");
    CHECK(clSetKernelArg(kernel, 2, sizeof(cl_mem), &d_c), "arg 2");
    CHECK(clSetKernelArg(kernel, 3, sizeof(int), &n), "arg 3");

    size_t local[2] = {64, 1};
    size_t global[2] = {((size_t)n + 63) / 64 * 64, 1};
    CHECK(clEnqueueNDRangeKernel(queue, kernel, 2, NULL, global, local, 0, NULL, NULL), "launch");
    CHECK(clFinish(queue), "clFinish");
    CHECK(clEnqueueReadBuffer(queue, d_c, CL_TRUE, 0, bytes, c, 0, NULL, NULL), "read c");

    int mismatches = 0;
    for (int i = 0; i < n; i++)
        if (c[i] != a[i] + b[i])
            mismatches++;
    printf("vadd n=%d: %d mismatches\n", n, mismatches);

    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseMemObject(d_a);
    clReleaseMemObject(d_b);
    clReleaseMemObject(d_c);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(source); free(a); free(b); free(c);
    return mismatches ? 1 : 0;
}

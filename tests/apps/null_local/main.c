/* Kernels launched with a NULL local size, so that the driver chooses the
 * work-group size: two write what the size makes of each work-item, one
 * only scales a vector. Prints a hash of each output and the mismatch
 * count of the scaled vector against the CPU. */
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

static unsigned long hash(const void *v, size_t bytes)
{
    unsigned long h = 1469598103934665603UL;
    const unsigned char *b = v;
    for (size_t i = 0; i < bytes; i++)
        h = (h ^ b[i]) * 1099511628211UL;
    return h;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 16384;
    int w = 96, h = 80;
    int *where = malloc((size_t)n * sizeof(int)), *where2d = malloc((size_t)w * h * sizeof(int));
    float *a = malloc((size_t)n * sizeof(float)), *b = malloc((size_t)n * sizeof(float));
    for (int i = 0; i < n; i++)
        a[i] = (float)(i % 211) * 0.5f - 3.0f;

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err, "clCreateCommandQueue");
    cl_mem dw = clCreateBuffer(context, CL_MEM_WRITE_ONLY, (size_t)n * sizeof(int), NULL, &err);
    CHECK(err, "clCreateBuffer where");
    cl_mem dw2 = clCreateBuffer(context, CL_MEM_WRITE_ONLY, (size_t)w * h * sizeof(int), NULL, &err);
    CHECK(err, "clCreateBuffer where2d");
    cl_mem da = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (size_t)n * sizeof(float), a, &err);
    CHECK(err, "clCreateBuffer a");
    cl_mem db = clCreateBuffer(context, CL_MEM_WRITE_ONLY, (size_t)n * sizeof(float), NULL, &err);
    CHECK(err, "clCreateBuffer b");

    size_t len;
    char *source = read_file("kernel.cl", &len);
    cl_program program = clCreateProgramWithSource(context, 1, (const char **)&source, &len, &err);
    CHECK(err, "clCreateProgramWithSource");
    err = clBuildProgram(program, 1, &device, NULL, NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[4096];
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build failed:\n%s\n", log);
        return 2;
    }
    cl_kernel k1 = clCreateKernel(program, "where", &err);
    CHECK(err, "clCreateKernel where");
    cl_kernel k2 = clCreateKernel(program, "where2d", &err);
    CHECK(err, "clCreateKernel where2d");
    cl_kernel k3 = clCreateKernel(program, "scale", &err);
    CHECK(err, "clCreateKernel scale");
    float s = 1.5f;
    CHECK(clSetKernelArg(k1, 0, sizeof(cl_mem), &dw), "arg 0");
    CHECK(clSetKernelArg(k1, 1, sizeof(int), &n), "arg 1");
    CHECK(clSetKernelArg(k2, 0, sizeof(cl_mem), &dw2), "arg 0");
    CHECK(clSetKernelArg(k2, 1, sizeof(int), &w), "arg 1");
    CHECK(clSetKernelArg(k3, 0, sizeof(cl_mem), &da), "arg 0");
    CHECK(clSetKernelArg(k3, 1, sizeof(cl_mem), &db), "arg 1");
    CHECK(clSetKernelArg(k3, 2, sizeof(float), &s), "arg 2");
    CHECK(clSetKernelArg(k3, 3, sizeof(int), &n), "arg 3");
    size_t g1 = (size_t)n, g2[2] = {(size_t)w, (size_t)h};
    for (int rep = 0; rep < 3; rep++) {
        CHECK(clEnqueueNDRangeKernel(queue, k1, 1, NULL, &g1, NULL, 0, NULL, NULL), "launch where");
        CHECK(clEnqueueNDRangeKernel(queue, k2, 2, NULL, g2, NULL, 0, NULL, NULL), "launch where2d");
        CHECK(clEnqueueNDRangeKernel(queue, k3, 1, NULL, &g1, NULL, 0, NULL, NULL), "launch scale");
    }
    CHECK(clFinish(queue), "clFinish");
    CHECK(clEnqueueReadBuffer(queue, dw, CL_TRUE, 0, (size_t)n * sizeof(int), where, 0, NULL, NULL), "read where");
    CHECK(clEnqueueReadBuffer(queue, dw2, CL_TRUE, 0, (size_t)w * h * sizeof(int), where2d, 0, NULL, NULL), "read where2d");
    CHECK(clEnqueueReadBuffer(queue, db, CL_TRUE, 0, (size_t)n * sizeof(float), b, 0, NULL, NULL), "read b");

    int mismatches = 0;
    for (int i = 0; i < n; i++)
        if (b[i] != a[i] * s + (float)n)
            mismatches++;
    printf("where %016lx\nwhere2d %016lx\nscale %016lx\n", hash(where, (size_t)n * sizeof(int)),
           hash(where2d, (size_t)w * h * sizeof(int)), hash(b, (size_t)n * sizeof(float)));
    printf("null_local n=%d: %d mismatches\n", n, mismatches);

    clReleaseKernel(k1);
    clReleaseKernel(k2);
    clReleaseKernel(k3);
    clReleaseProgram(program);
    clReleaseMemObject(dw);
    clReleaseMemObject(dw2);
    clReleaseMemObject(da);
    clReleaseMemObject(db);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(source); free(where); free(where2d); free(a); free(b);
    return mismatches != 0;
}

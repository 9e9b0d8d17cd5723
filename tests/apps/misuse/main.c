/* Misuses OpenCL on purpose and prints the error code of each call, so a
   run under the layer can be compared with a run without it. */
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


int main(void)
{
    int n = 256;
    float a[256], b[256];
    for (int i = 0; i < n; i++)
        a[i] = (float)i;
    setup();
    cl_mem d_a = buffer(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof a, a);
    cl_mem d_b = buffer(CL_MEM_WRITE_ONLY, sizeof b, NULL);
    cl_int err;
    cl_program program = build(context, device, "kernel.cl", NULL);
    cl_kernel kernel = clCreateKernel(program, "twice", &err);
    CHECK(err, "clCreateKernel");
    cl_kernel missing = clCreateKernel(program, "no_such_kernel", &err);
    printf("clCreateKernel unknown name: %d %s\n", (int)err, missing ? "handle" : "null");

    size_t global = 256, local = 64;
    printf("launch with no argument set: %d\n",
           (int)clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL));
    printf("arg index 7: %d\n", (int)clSetKernelArg(kernel, 7, sizeof(cl_mem), &d_a));
    printf("arg 2 of size 2: %d\n", (int)clSetKernelArg(kernel, 2, 2, &n));
    printf("arg 0: %d\n", (int)clSetKernelArg(kernel, 0, sizeof(cl_mem), &d_a));
    printf("arg 1: %d\n", (int)clSetKernelArg(kernel, 1, sizeof(cl_mem), &d_b));
    printf("launch with argument 2 unset: %d\n",
           (int)clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL));
    printf("arg 2: %d\n", (int)clSetKernelArg(kernel, 2, sizeof(int), &n));
    size_t bad_local = 48;
    printf("launch with a local size that does not divide: %d\n",
           (int)clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &bad_local, 0, NULL, NULL));
    printf("launch with work_dim 0: %d\n",
           (int)clEnqueueNDRangeKernel(queue, kernel, 0, NULL, &global, &local, 0, NULL, NULL));
    printf("launch: %d\n", (int)clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL));
    printf("read past the end: %d\n",
           (int)clEnqueueReadBuffer(queue, d_b, CL_TRUE, 4, sizeof b, b, 0, NULL, NULL));
    printf("read: %d\n", (int)clEnqueueReadBuffer(queue, d_b, CL_TRUE, 0, sizeof b, b, 0, NULL, NULL));
    int mismatches = 0;
    for (int i = 0; i < n; i++)
        if (b[i] != 2.0f * a[i])
            mismatches++;
    printf("misuse: %d mismatches\n", mismatches);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseMemObject(d_a);
    clReleaseMemObject(d_b);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return mismatches ? 1 : 0;
}

/* A CL_MEM_USE_HOST_PTR buffer updated in place over several launches,
   read through clEnqueueMapBuffer and through the host array: ./scale_map N. */
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

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 3000;
    int rounds = 3;
    float s = 0.5f;
    float *x = malloc(sizeof(float) * n), *ref = malloc(sizeof(float) * n);
    for (int i = 0; i < n; i++)
        x[i] = ref[i] = (float)(i % 101) - 50.0f;

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err, "clCreateCommandQueue");

    cl_mem d_x = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, sizeof(float) * n, x, &err);
    CHECK(err, "clCreateBuffer x");

    cl_program program = build(context, device, "kernel.cl", NULL);
    cl_kernel kernel = clCreateKernel(program, "scale", &err);
    CHECK(err, "clCreateKernel");
    CHECK(clSetKernelArg(kernel, 0, sizeof(cl_mem), &d_x), "arg 0");
    CHECK(clSetKernelArg(kernel, 1, sizeof(float), &s), "arg 1");
    CHECK(clSetKernelArg(kernel, 2, sizeof(int), &n), "arg 2");

    size_t local = 100;
    size_t global = ((size_t)n + 99) / 100 * 100;
    int mismatches = 0;
    for (int r = 0; r < rounds; r++) {
        CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL), "launch");
        for (int i = 0; i < n; i++)
            ref[i] = ref[i] * s + 1.0f;
        float *mapped = clEnqueueMapBuffer(queue, d_x, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                           sizeof(float) * n, 0, NULL, NULL, &err);
        CHECK(err, "clEnqueueMapBuffer");
        for (int i = 0; i < n; i++)
            if (differs(mapped[i], ref[i]))
                mismatches++;
        mapped[0] = ref[0] = 7.0f; /* a host write through the map, seen by the next launch */
        CHECK(clEnqueueUnmapMemObject(queue, d_x, mapped, 0, NULL, NULL), "clEnqueueUnmapMemObject");
    }
    CHECK(clFinish(queue), "clFinish");
    float *mapped = clEnqueueMapBuffer(queue, d_x, CL_TRUE, CL_MAP_READ, 0, sizeof(float) * n, 0, NULL, NULL, &err);
    CHECK(err, "clEnqueueMapBuffer");
    for (int i = 0; i < n; i++)
        if (differs(mapped[i], ref[i]) || differs(x[i], ref[i]))
            mismatches++;
    CHECK(clEnqueueUnmapMemObject(queue, d_x, mapped, 0, NULL, NULL), "clEnqueueUnmapMemObject");
    CHECK(clFinish(queue), "clFinish");
    printf("scale_map n=%d rounds=%d: %d mismatches\n", n, rounds, mismatches);

    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseMemObject(d_x);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(x); free(ref);
    return mismatches ? 1 : 0;
}

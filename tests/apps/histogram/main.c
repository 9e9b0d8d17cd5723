/* Histograms of the values shifted by 0..5 bits, accumulated into one set
   of bins with global atomics (merged as a sum when split): ./histogram N. */
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


int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 5000;
    cl_uint nbins = 16;
    cl_uint *data = malloc(sizeof(cl_uint) * n);
    cl_uint bins[16] = {0}, ref[16] = {0};
    int rounds = 6;
    for (int i = 0; i < n; i++) {
        data[i] = (cl_uint)(i * 2654435761u) >> 7;
        for (int shift = 0; shift < rounds; shift++)
            ref[(data[i] >> shift) % nbins]++;
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

    cl_mem d_data = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(cl_uint) * n, data, &err);
    CHECK(err, "clCreateBuffer data");
    cl_mem d_bins = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof bins, bins, &err);
    CHECK(err, "clCreateBuffer bins");

    cl_program program = build(context, device, "kernel.cl", NULL);
    cl_kernel kernel = clCreateKernel(program, "histogram", &err);
    CHECK(err, "clCreateKernel");
    CHECK(clSetKernelArg(kernel, 0, sizeof(cl_mem), &d_data), "arg 0");
    CHECK(clSetKernelArg(kernel, 1, sizeof(cl_mem), &d_bins), "arg 1");
    CHECK(clSetKernelArg(kernel, 2, sizeof(cl_uint), &nbins), "arg 2");
    CHECK(clSetKernelArg(kernel, 3, sizeof(int), &n), "arg 3");

    size_t local = 64;
    size_t global = ((size_t)n + 63) / 64 * 64;
    for (int shift = 0; shift < rounds; shift++) {
        CHECK(clSetKernelArg(kernel, 4, sizeof(int), &shift), "arg 4");
        CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL), "launch");
    }
    CHECK(clEnqueueReadBuffer(queue, d_bins, CL_TRUE, 0, sizeof bins, bins, 0, NULL, NULL), "read bins");

    int mismatches = 0;
    for (cl_uint k = 0; k < nbins; k++)
        if (bins[k] != ref[k])
            mismatches++;
    printf("histogram n=%d: %d mismatches\n", n, mismatches);

    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseMemObject(d_data);
    clReleaseMemObject(d_bins);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(data);
    return mismatches ? 1 : 0;
}

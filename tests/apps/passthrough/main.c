/* A program whose kernels the layer never splits (global atomics whose
   returned values are used), launched
   many times in a loop with a read every 64 launches: what the layer costs
   when everything passes through. Prints the wall time of the first
   iteration and of the others;
   ./passthrough N LAUNCHES. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 16384;
    int launches = argc > 2 ? atoi(argv[2]) : 256;
    if (n < 64 || n % 64 || launches < 1) { fprintf(stderr, "N must be a multiple of 64, LAUNCHES at least 1\n"); return 2; }
    cl_uint nbins = 64;
    cl_uint *data = malloc(sizeof(cl_uint) * n);
    cl_uint *bins = calloc(nbins, sizeof(cl_uint)), *want = calloc(nbins, sizeof(cl_uint));
    cl_uint *got = malloc(sizeof(cl_uint) * nbins);
    for (int i = 0; i < n; i++)
        data[i] = (cl_uint)i * 2654435761u;

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err, "clCreateCommandQueue");
    cl_mem d_data = clCreateBuffer(context, CL_MEM_READ_ONLY, sizeof(cl_uint) * n, NULL, &err);
    CHECK(err, "clCreateBuffer data");
    cl_mem d_bins = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(cl_uint) * nbins, NULL, &err);
    CHECK(err, "clCreateBuffer bins");
    cl_mem d_calls = clCreateBuffer(context, CL_MEM_READ_WRITE, 2 * sizeof(cl_uint), NULL, &err);
    CHECK(err, "clCreateBuffer calls");
    cl_uint zero[2] = {0, 0};
    CHECK(clEnqueueWriteBuffer(queue, d_data, CL_TRUE, 0, sizeof(cl_uint) * n, data, 0, NULL, NULL), "write data");
    CHECK(clEnqueueWriteBuffer(queue, d_bins, CL_TRUE, 0, sizeof(cl_uint) * nbins, bins, 0, NULL, NULL), "write bins");
    CHECK(clEnqueueWriteBuffer(queue, d_calls, CL_TRUE, 0, sizeof zero, zero, 0, NULL, NULL), "write calls");

    size_t len;
    char *source = read_file("kernel.cl", &len);
    cl_program program = clCreateProgramWithSource(context, 1, (const char **)&source, &len, &err);
    CHECK(err, "clCreateProgramWithSource");
    free(source);
    CHECK(clBuildProgram(program, 1, &device, NULL, NULL, NULL), "clBuildProgram");
    cl_kernel k_hist = clCreateKernel(program, "histogram", &err);
    CHECK(err, "clCreateKernel histogram");
    cl_kernel k_halve = clCreateKernel(program, "halve", &err);
    CHECK(err, "clCreateKernel halve");
    CHECK(clSetKernelArg(k_hist, 0, sizeof(cl_mem), &d_data), "arg");
    CHECK(clSetKernelArg(k_hist, 1, sizeof(cl_mem), &d_bins), "arg");
    CHECK(clSetKernelArg(k_hist, 2, sizeof(cl_uint), &nbins), "arg");
    CHECK(clSetKernelArg(k_hist, 3, sizeof(int), &n), "arg");
    CHECK(clSetKernelArg(k_halve, 0, sizeof(cl_mem), &d_bins), "arg");
    CHECK(clSetKernelArg(k_halve, 1, sizeof(cl_mem), &d_calls), "arg");
    CHECK(clSetKernelArg(k_halve, 2, sizeof(cl_uint), &nbins), "arg");

    size_t global = (size_t)n, local = 64, global_bins = nbins;
    int mismatches = 0;
    /* The first iteration (where the layer analyzes each kernel once) is
       timed apart from the rest. */
    double t0 = now_ms(), t_first = t0;
    for (int l = 0; l < launches; l++) {
        if (l == 1) {
            CHECK(clFinish(queue), "clFinish");
            t_first = now_ms();
        }
        int shift = l % 8;
        CHECK(clSetKernelArg(k_hist, 4, sizeof(int), &shift), "arg");
        CHECK(clEnqueueNDRangeKernel(queue, k_hist, 1, NULL, &global, &local, 0, NULL, NULL), "launch histogram");
        CHECK(clEnqueueNDRangeKernel(queue, k_halve, 1, NULL, &global_bins, NULL, 0, NULL, NULL), "launch halve");
        for (int i = 0; i < n; i++)
            want[(data[i] >> shift) % nbins]++;
        for (cl_uint b = 0; b < nbins; b++)
            want[b] /= 2;
        if (l % 64 == 63 || l == launches - 1) {
            CHECK(clEnqueueReadBuffer(queue, d_bins, CL_TRUE, 0, sizeof(cl_uint) * nbins, got, 0, NULL, NULL), "read bins");
            for (cl_uint b = 0; b < nbins; b++)
                mismatches += got[b] != want[b];
        }
    }
    CHECK(clFinish(queue), "clFinish");
    double t1 = now_ms();
    cl_uint calls;
    CHECK(clEnqueueReadBuffer(queue, d_calls, CL_TRUE, 0, sizeof calls, &calls, 0, NULL, NULL), "read calls");
    mismatches += calls != (cl_uint)launches;

    printf("passthrough n=%d launches=%d first_ms=%.3f loop_ms=%.3f\n", n, launches, t_first - t0, t1 - t_first);
    printf("passthrough n=%d: %d mismatches\n", n, mismatches);
    clReleaseKernel(k_hist);
    clReleaseKernel(k_halve);
    clReleaseProgram(program);
    clReleaseMemObject(d_data);
    clReleaseMemObject(d_bins);
    clReleaseMemObject(d_calls);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(data); free(bins); free(want); free(got);
    return mismatches ? 1 : 0;
}

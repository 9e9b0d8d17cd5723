/*
 * matmul.c -- an ordinary OpenCL host program (matrix multiplication with a
 * run-time width) changed to split its kernel across every device of the
 * first platform with clpart. The lines that differ from the single-device
 * program are marked "CLPART:"; each says what it replaces.
 *
 *   make matmul && POCL_DEVICES="pthread basic" ./matmul [WIDTH [HEIGHT]]
 *
 * c (HEIGHT x WIDTH) = a (HEIGHT x WIDTH) * b (WIDTH x WIDTH). Prints the
 * clpart report and PASS when c matches the CPU reference (relative error at
 * most 1e-4); exits 1 otherwise.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <clpart.h> /* CLPART: the clpart API */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const char *source =
    "__kernel void matmul(__global float *c, __global const float *a,\n"
    "                     __global const float *b, int width)\n"
    "{\n"
    "    int x = get_global_id(0);\n"
    "    int y = get_global_id(1);\n"
    "    float element = 0.0f;\n"
    "    for (int i = 0; i < width; i++)\n"
    "        element += a[y * width + i] * b[i * width + x];\n"
    "    c[y * width + x] = element;\n"
    "}\n";

#define CL_CHECK(call)                                                         \
    do {                                                                       \
        cl_int err_ = (call);                                                  \
        if (err_ != CL_SUCCESS) {                                              \
            fprintf(stderr, "matmul: %s failed: %d\n", #call, err_);          \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

/* CLPART: clpart calls return a status code and leave a message */
#define CLPART_CHECK(call)                                                     \
    do {                                                                       \
        int st_ = (call);                                                      \
        if (st_ != CLPART_SUCCESS) {                                           \
            fprintf(stderr, "matmul: %s failed: %s: %s\n", #call,             \
                    clpart_status_name(st_), clpart_last_error());             \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static float next_value(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return (float)((*state >> 8) % 1000) / 1000.0f;
}

int main(int argc, char **argv)
{
    int width = argc > 1 ? atoi(argv[1]) : 64;
    int height = argc > 2 ? atoi(argv[2]) : 48;
    size_t local[2] = {16, 8};
    if (width <= 0 || height <= 0 || width % 16 != 0 || height % 8 != 0) {
        fprintf(stderr, "matmul: WIDTH must be a positive multiple of 16, HEIGHT of 8\n");
        return 2;
    }
    size_t global[2] = {(size_t)width, (size_t)height};
    size_t n_ab = (size_t)width * (size_t)height, n_b = (size_t)width * (size_t)width;

    cl_platform_id platform;
    cl_device_id devices[2];
    cl_uint n_devices = 0;
    cl_int err;
    CL_CHECK(clGetPlatformIDs(1, &platform, NULL));
    CL_CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 2, devices, &n_devices));
    cl_context context = clCreateContext(NULL, n_devices, devices, NULL, NULL, &err);
    CL_CHECK(err);

    float *a = malloc(n_ab * sizeof(float));
    float *b = malloc(n_b * sizeof(float));
    float *c = malloc(n_ab * sizeof(float));
    if (!a || !b || !c) {
        fprintf(stderr, "matmul: out of memory\n");
        return 1;
    }
    unsigned seed = 1;
    for (size_t i = 0; i < n_ab; i++)
        a[i] = next_value(&seed);
    for (size_t i = 0; i < n_b; i++)
        b[i] = next_value(&seed);
    for (size_t i = 0; i < n_ab; i++)
        c[i] = 0.0f;

    /* CLPART: replaces clCreateProgramWithSource, clBuildProgram,
       clCreateKernel and the clCreateBuffer calls */
    clpart_plan *plan;
    CLPART_CHECK(clpart_plan_create_from_source(source, "matmul", NULL, &plan));

    /* CLPART: were clSetKernelArg(kernel, i, sizeof(cl_mem), &buf_i) and
       clSetKernelArg(kernel, 3, sizeof(int), &width) */
    CLPART_CHECK(clpart_plan_set_arg_buffer(plan, 0, c, n_ab * sizeof(float)));
    CLPART_CHECK(clpart_plan_set_arg_buffer(plan, 1, a, n_ab * sizeof(float)));
    CLPART_CHECK(clpart_plan_set_arg_buffer(plan, 2, b, n_b * sizeof(float)));
    CLPART_CHECK(clpart_plan_set_arg_scalar(plan, 3, sizeof(int), &width));

    /* CLPART: replaces clEnqueueNDRangeKernel and the blocking
       clEnqueueReadBuffer of c: 86% of the work-groups on the first device,
       14% on the second; c is filled when the call returns */
    double shares[2] = {0.86, 0.14};
    CLPART_CHECK(clpart_plan_launch_on(plan, 2, NULL, global, local, n_devices, devices, shares));

    const char *report;
    CLPART_CHECK(clpart_plan_report_text(plan, &report));
    printf("%s\n", report);
    clpart_report summary;
    CLPART_CHECK(clpart_plan_report(plan, &summary));
    printf("split %d over %u devices, %llu bytes moved (whole buffers: %llu)\n",
           summary.split, summary.n_devices, (unsigned long long)summary.bytes_total,
           (unsigned long long)summary.bytes_whole_buffers);

    int ok = 1;
    for (int y = 0; y < height && ok; y++) {
        for (int x = 0; x < width; x++) {
            float want = 0.0f;
            for (int i = 0; i < width; i++)
                want += a[y * width + i] * b[i * width + x];
            float got = c[y * width + x];
            if (!(fabsf(got - want) <= 1e-4f * fmaxf(1.0f, fabsf(want)))) {
                fprintf(stderr, "matmul: c[%d][%d] = %g, expected %g\n", y, x, got, want);
                ok = 0;
                break;
            }
        }
    }

    CLPART_CHECK(clpart_plan_release(plan)); /* CLPART: was clReleaseKernel, clReleaseProgram, clReleaseMemObject */
    CL_CHECK(clReleaseContext(context));
    free(a);
    free(b);
    free(c);
    puts(ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}

/*
 * vadd.c -- an ordinary OpenCL host program (vector addition) changed to
 * split its kernel across every device of the first platform with clpart.
 * The lines that differ from the single-device program are marked "CLPART:";
 * each says what it replaces.
 *
 *   make vadd && POCL_DEVICES="pthread basic" ./vadd [N]
 *
 * Prints the clpart report and PASS when the result equals the CPU
 * reference; exits 1 otherwise.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <clpart.h> /* CLPART: the clpart API */

#include <stdio.h>
#include <stdlib.h>

static const char *source =
    "__kernel void vadd(__global const int *a, __global const int *b,\n"
    "                   __global int *c)\n"
    "{\n"
    "    int i = get_global_id(0);\n"
    "    c[i] = a[i] + b[i];\n"
    "}\n";

#define CL_CHECK(call)                                                         \
    do {                                                                       \
        cl_int err_ = (call);                                                  \
        if (err_ != CL_SUCCESS) {                                              \
            fprintf(stderr, "vadd: %s failed: %d\n", #call, err_);            \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

/* CLPART: clpart calls return a status code and leave a message */
#define CLPART_CHECK(call)                                                     \
    do {                                                                       \
        int st_ = (call);                                                      \
        if (st_ != CLPART_SUCCESS) {                                           \
            fprintf(stderr, "vadd: %s failed: %s: %s\n", #call,               \
                    clpart_status_name(st_), clpart_last_error());             \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 4096;
    size_t local = 64;
    if (n == 0 || n % local != 0) {
        fprintf(stderr, "vadd: N must be a positive multiple of %zu\n", local);
        return 2;
    }

    cl_platform_id platform;
    cl_device_id devices[2];
    cl_uint n_devices = 0;
    cl_int err;
    CL_CHECK(clGetPlatformIDs(1, &platform, NULL));
    CL_CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 2, devices, &n_devices));
    cl_context context = clCreateContext(NULL, n_devices, devices, NULL, NULL, &err);
    CL_CHECK(err);

    int *a = malloc(n * sizeof(int));
    int *b = malloc(n * sizeof(int));
    int *c = malloc(n * sizeof(int));
    if (!a || !b || !c) {
        fprintf(stderr, "vadd: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        a[i] = (int)(i * 7 % 1000) - 500;
        b[i] = (int)(i * 13 % 977);
        c[i] = -1;
    }

    /* CLPART: replaces clCreateProgramWithSource, clBuildProgram,
       clCreateKernel and the three clCreateBuffer calls (clpart builds the
       kernel on each device and moves only the ranges each one needs) */
    clpart_plan *plan;
    CLPART_CHECK(clpart_plan_create_from_source(source, "vadd", NULL, &plan));

    /* CLPART: were clSetKernelArg(kernel, i, sizeof(cl_mem), &buf_i) */
    CLPART_CHECK(clpart_plan_set_arg_buffer(plan, 0, a, n * sizeof(int)));
    CLPART_CHECK(clpart_plan_set_arg_buffer(plan, 1, b, n * sizeof(int)));
    CLPART_CHECK(clpart_plan_set_arg_buffer(plan, 2, c, n * sizeof(int)));

    /* CLPART: replaces clEnqueueNDRangeKernel on one queue and the blocking
       clEnqueueReadBuffer of c: 3/4 of the work-groups go to the first
       device, 1/4 to the second; c is filled when the call returns */
    double shares[2] = {0.75, 0.25};
    CLPART_CHECK(clpart_plan_launch_on(plan, 1, NULL, &n, &local, n_devices, devices, shares));

    const char *report;
    CLPART_CHECK(clpart_plan_report_text(plan, &report));
    printf("%s\n", report);

    int ok = 1;
    for (size_t i = 0; i < n; i++) {
        int want = a[i] + b[i];
        if (c[i] != want) {
            fprintf(stderr, "vadd: c[%zu] = %d, expected %d\n", i, c[i], want);
            ok = 0;
            break;
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

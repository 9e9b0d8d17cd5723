/* Commands that wait for a user event the program sets only later, queued
   ahead of operations on buffers that split launches left on clpart's
   devices: a non-blocking read of such a buffer, and a launch; and a launch
   whose own wait list holds a user event not yet set. None may
   wait for the user event before the program sets it. Each step is also
   done on the host; ./user_event N (N a multiple of 64). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static int differs(float got, float want)
{
    return fabsf(got - want) > 1e-3f * fmaxf(1.0f, fabsf(want));
}

static int compare(const char *what, const float *got, const float *want, int count)
{
    int bad = 0;
    for (int i = 0; i < count; i++)
        bad += differs(got[i], want[i]);
    if (bad)
        fprintf(stderr, "%s: %d mismatches\n", what, bad);
    return bad;
}

static cl_command_queue queue;
static cl_kernel k_axpb;
static int n;
static size_t global, local = 64;

static void axpb(cl_mem x, float a, float b, float *rx)
{
    CHECK(clSetKernelArg(k_axpb, 0, sizeof(cl_mem), &x), "arg");
    CHECK(clSetKernelArg(k_axpb, 1, sizeof(float), &a), "arg");
    CHECK(clSetKernelArg(k_axpb, 2, sizeof(float), &b), "arg");
    CHECK(clSetKernelArg(k_axpb, 3, sizeof(int), &n), "arg");
    CHECK(clEnqueueNDRangeKernel(queue, k_axpb, 1, NULL, &global, &local, 0, NULL, NULL), "launch axpb");
    for (int i = 0; i < n; i++)
        rx[i] = a * rx[i] + b;
}

int main(int argc, char **argv)
{
    n = argc > 1 ? atoi(argv[1]) : 4096;
    if (n < 64 || n % 64) { fprintf(stderr, "N must be a multiple of 64\n"); return 2; }
    global = (size_t)n;
    size_t bytes = sizeof(float) * n;
    float *x = malloc(bytes), *y = malloc(bytes), *rx = malloc(bytes), *out = malloc(bytes);
    for (int i = 0; i < n; i++) {
        rx[i] = x[i] = (float)(i % 1000);
        y[i] = (float)(i % 7);
    }

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err, "clCreateCommandQueue");
    cl_mem d_x = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK(err, "clCreateBuffer x");
    cl_mem d_y = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK(err, "clCreateBuffer y");
    CHECK(clEnqueueWriteBuffer(queue, d_x, CL_TRUE, 0, bytes, x, 0, NULL, NULL), "write x");

    size_t len;
    char *source = read_file("kernel.cl", &len);
    cl_program program = clCreateProgramWithSource(context, 1, (const char **)&source, &len, &err);
    CHECK(err, "clCreateProgramWithSource");
    free(source);
    CHECK(clBuildProgram(program, 1, &device, NULL, NULL, NULL), "clBuildProgram");
    k_axpb = clCreateKernel(program, "axpb", &err);
    CHECK(err, "clCreateKernel axpb");

    int mismatches = 0;
    /* 1. Launches, then a write of y that waits for a user event, then a
       non-blocking read of x queued behind it; the event is set after. */
    for (int step = 0; step < 3; step++)
        axpb(d_x, 1.5f, 1.0f, rx);
    cl_event gate = clCreateUserEvent(context, &err);
    CHECK(err, "clCreateUserEvent");
    CHECK(clEnqueueWriteBuffer(queue, d_y, CL_FALSE, 0, bytes, y, 1, &gate, NULL), "write y after the gate");
    cl_event read;
    CHECK(clEnqueueReadBuffer(queue, d_x, CL_FALSE, 0, bytes, out, 0, NULL, &read), "read x");
    CHECK(clSetUserEventStatus(gate, CL_COMPLETE), "clSetUserEventStatus");
    CHECK(clWaitForEvents(1, &read), "clWaitForEvents");
    clReleaseEvent(read);
    clReleaseEvent(gate);
    mismatches += compare("x read behind a gated write", out, rx, n);

    /* 2. A launch, a gated write of y, then a launch queued behind it and a
       non-blocking read; the event is set after. */
    axpb(d_x, 0.5f, 2.0f, rx);
    gate = clCreateUserEvent(context, &err);
    CHECK(err, "clCreateUserEvent");
    CHECK(clEnqueueWriteBuffer(queue, d_y, CL_FALSE, 0, bytes, y, 1, &gate, NULL), "write y after the gate");
    axpb(d_x, 2.0f, -1.0f, rx);
    CHECK(clEnqueueReadBuffer(queue, d_x, CL_FALSE, 0, bytes, out, 0, NULL, &read), "read x");
    CHECK(clSetUserEventStatus(gate, CL_COMPLETE), "clSetUserEventStatus");
    CHECK(clWaitForEvents(1, &read), "clWaitForEvents");
    clReleaseEvent(read);
    clReleaseEvent(gate);
    mismatches += compare("x launched and read behind a gated write", out, rx, n);

    /* 2b. A launch whose own wait list holds a user event not yet set. */
    axpb(d_x, 1.0f, 3.0f, rx);
    gate = clCreateUserEvent(context, &err);
    CHECK(err, "clCreateUserEvent");
    float two = 2.0f, none = 0.0f;
    CHECK(clSetKernelArg(k_axpb, 1, sizeof(float), &two), "arg");
    CHECK(clSetKernelArg(k_axpb, 2, sizeof(float), &none), "arg");
    cl_event ran;
    CHECK(clEnqueueNDRangeKernel(queue, k_axpb, 1, NULL, &global, &local, 1, &gate, &ran), "launch axpb after the gate");
    for (int i = 0; i < n; i++)
        rx[i] = 2.0f * rx[i];
    CHECK(clSetUserEventStatus(gate, CL_COMPLETE), "clSetUserEventStatus");
    CHECK(clEnqueueReadBuffer(queue, d_x, CL_TRUE, 0, bytes, out, 1, &ran, NULL), "read x");
    clReleaseEvent(ran);
    clReleaseEvent(gate);
    mismatches += compare("x launched after a gate", out, rx, n);

    /* 3. With the event set, launches over x and y, then blocking reads. */
    for (int step = 0; step < 2; step++)
        axpb(d_x, 1.0f, 1.0f, rx);
    float *ry = malloc(bytes);
    memcpy(ry, y, bytes);
    axpb(d_y, 3.0f, 0.5f, ry);
    CHECK(clFinish(queue), "clFinish");
    CHECK(clEnqueueReadBuffer(queue, d_x, CL_TRUE, 0, bytes, out, 0, NULL, NULL), "read x");
    mismatches += compare("x", out, rx, n);
    CHECK(clEnqueueReadBuffer(queue, d_y, CL_TRUE, 0, bytes, out, 0, NULL, NULL), "read y");
    mismatches += compare("y", out, ry, n);

    printf("user_event n=%d: %d mismatches\n", n, mismatches);
    clReleaseKernel(k_axpb);
    clReleaseProgram(program);
    clReleaseMemObject(d_x);
    clReleaseMemObject(d_y);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(x); free(y); free(rx); free(ry); free(out);
    return mismatches ? 1 : 0;
}

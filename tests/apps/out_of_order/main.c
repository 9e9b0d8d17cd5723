/* An out-of-order queue: launches chained by their events, then
   non-blocking reads of buffers the launches left on clpart's devices,
   ordered by the program only through its own events (the layer's sync must
   come before them all the same). Each step is also done on the host;
   ./out_of_order N (N a multiple of 64). */
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

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 65536;
    if (n < 64 || n % 64) { fprintf(stderr, "N must be a multiple of 64\n"); return 2; }
    size_t global = (size_t)n, local = 64;
    size_t bytes = sizeof(float) * n;
    float *x = malloc(bytes), *rx = malloc(bytes), *ry = malloc(bytes);
    float *outx = malloc(bytes), *outy = malloc(bytes);
    for (int i = 0; i < n; i++)
        rx[i] = x[i] = (float)(i % 1000);

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
    CHECK(err, "clCreateCommandQueue (out of order)");
    cl_mem d_x = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK(err, "clCreateBuffer x");
    cl_mem d_y = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK(err, "clCreateBuffer y");
    cl_event ev;
    CHECK(clEnqueueWriteBuffer(queue, d_x, CL_FALSE, 0, bytes, x, 0, NULL, &ev), "write x");

    size_t len;
    char *source = read_file("kernel.cl", &len);
    cl_program program = clCreateProgramWithSource(context, 1, (const char **)&source, &len, &err);
    CHECK(err, "clCreateProgramWithSource");
    free(source);
    CHECK(clBuildProgram(program, 1, &device, NULL, NULL, NULL), "clBuildProgram");
    cl_kernel k_axpb = clCreateKernel(program, "axpb", &err);
    CHECK(err, "clCreateKernel axpb");
    cl_kernel k_neighbor = clCreateKernel(program, "neighbor", &err);
    CHECK(err, "clCreateKernel neighbor");

    int mismatches = 0;
    for (int round = 0; round < 3; round++) {
        /* x = a x + b three times, then y from x, each waiting for the last. */
        for (int step = 0; step < 3; step++) {
            float a = 1.0f + 0.5f * (float)step, b = (float)round;
            CHECK(clSetKernelArg(k_axpb, 0, sizeof(cl_mem), &d_x), "arg");
            CHECK(clSetKernelArg(k_axpb, 1, sizeof(float), &a), "arg");
            CHECK(clSetKernelArg(k_axpb, 2, sizeof(float), &b), "arg");
            CHECK(clSetKernelArg(k_axpb, 3, sizeof(int), &n), "arg");
            cl_event ran;
            CHECK(clEnqueueNDRangeKernel(queue, k_axpb, 1, NULL, &global, &local, 1, &ev, &ran), "launch axpb");
            clReleaseEvent(ev);
            ev = ran;
            for (int i = 0; i < n; i++)
                rx[i] = a * rx[i] + b;
        }
        CHECK(clSetKernelArg(k_neighbor, 0, sizeof(cl_mem), &d_x), "arg");
        CHECK(clSetKernelArg(k_neighbor, 1, sizeof(cl_mem), &d_y), "arg");
        CHECK(clSetKernelArg(k_neighbor, 2, sizeof(int), &n), "arg");
        cl_event ran;
        CHECK(clEnqueueNDRangeKernel(queue, k_neighbor, 1, NULL, &global, &local, 1, &ev, &ran), "launch neighbor");
        clReleaseEvent(ev);
        for (int i = 0; i < n; i++)
            ry[i] = rx[i] + (i > 0 ? rx[i - 1] : 0.0f);
        /* Both reads wait for the last launch only, and may run together. */
        cl_event read[2];
        CHECK(clEnqueueReadBuffer(queue, d_y, CL_FALSE, 0, bytes, outy, 1, &ran, &read[0]), "read y");
        CHECK(clEnqueueReadBuffer(queue, d_x, CL_FALSE, 0, bytes, outx, 1, &ran, &read[1]), "read x");
        clReleaseEvent(ran);
        CHECK(clWaitForEvents(2, read), "clWaitForEvents");
        mismatches += compare("x", outx, rx, n);
        mismatches += compare("y", outy, ry, n);
        ev = read[1];
        clReleaseEvent(read[0]);
    }
    clReleaseEvent(ev);
    CHECK(clFinish(queue), "clFinish");

    printf("out_of_order n=%d: %d mismatches\n", n, mismatches);
    clReleaseKernel(k_axpb);
    clReleaseKernel(k_neighbor);
    clReleaseProgram(program);
    clReleaseMemObject(d_x);
    clReleaseMemObject(d_y);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(x); free(rx); free(ry); free(outx); free(outy);
    return mismatches ? 1 : 0;
}

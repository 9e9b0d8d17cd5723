/* Buffers the layer keeps resident across split launches, read and written
   between launches by every kind of operation that goes to the driver: a
   partial write, a copy, a map for writing, a kernel with atomics, a
   partial fill, a kernel that sees floats as float4, a read through a sub-buffer, a rectangular read, a map for
   reading and a non-blocking read waiting on a launch's event. Each step is
   also done on the host; ./resident N (N a multiple of 64, at least 4096). */
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

static cl_command_queue queue;
static cl_kernel k_axpb, k_neighbor;
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
    n = argc > 1 ? atoi(argv[1]) : 4096;
    if (n < 4096 || n % 64) { fprintf(stderr, "N must be a multiple of 64, at least 4096\n"); return 2; }
    global = (size_t)n;
    size_t bytes = sizeof(float) * n;
    float *x = malloc(bytes), *y = malloc(bytes), *rx = malloc(bytes), *ry = malloc(bytes);
    float *out = malloc(bytes);
    for (int i = 0; i < n; i++) {
        rx[i] = x[i] = (float)(i % 1000);
        ry[i] = y[i] = 0.0f;
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
    cl_mem d_x = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, x, &err);
    CHECK(err, "clCreateBuffer x");
    cl_mem d_y = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, y, &err);
    CHECK(err, "clCreateBuffer y");
    int zero = 0, count = 0, rcount = 0;
    cl_mem d_count = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(int), &zero, &err);
    CHECK(err, "clCreateBuffer count");

    size_t len;
    char *source = read_file("kernel.cl", &len);
    cl_program program = clCreateProgramWithSource(context, 1, (const char **)&source, &len, &err);
    CHECK(err, "clCreateProgramWithSource");
    free(source);
    CHECK(clBuildProgram(program, 1, &device, NULL, NULL, NULL), "clBuildProgram");
    k_axpb = clCreateKernel(program, "axpb", &err);
    CHECK(err, "clCreateKernel axpb");
    k_neighbor = clCreateKernel(program, "neighbor", &err);
    CHECK(err, "clCreateKernel neighbor");
    cl_kernel k_negate = clCreateKernel(program, "negate_above", &err);
    CHECK(err, "clCreateKernel negate_above");

    /* 1. A split launch: x stays on clpart's devices. */
    axpb(d_x, 2.0f, 1.0f, rx);

    /* 2. A partial write (the rest of x must be current first), then a launch. */
    float patch[100];
    for (int i = 0; i < 100; i++)
        patch[i] = -1.0f - (float)i;
    CHECK(clEnqueueWriteBuffer(queue, d_x, CL_FALSE, 100 * sizeof(float), sizeof patch, patch, 0, NULL, NULL), "write patch");
    memcpy(rx + 100, patch, sizeof patch);
    axpb(d_x, 0.5f, 3.0f, rx);

    /* 3. y from x, split; then part of y copied into x by the driver. */
    CHECK(clSetKernelArg(k_neighbor, 0, sizeof(cl_mem), &d_x), "arg");
    CHECK(clSetKernelArg(k_neighbor, 1, sizeof(cl_mem), &d_y), "arg");
    CHECK(clSetKernelArg(k_neighbor, 2, sizeof(int), &n), "arg");
    CHECK(clEnqueueNDRangeKernel(queue, k_neighbor, 1, NULL, &global, &local, 0, NULL, NULL), "launch neighbor");
    for (int i = 0; i < n; i++)
        ry[i] = rx[i] + (i > 0 ? rx[i - 1] : 0.0f);
    CHECK(clEnqueueCopyBuffer(queue, d_y, d_x, 0, 1024 * sizeof(float), 512 * sizeof(float), 0, NULL, NULL), "copy");
    memcpy(rx + 1024, ry, 512 * sizeof(float));
    axpb(d_x, 1.0f, 1.0f, rx);

    /* 4. A map for writing changes x on the host side. */
    float *m = clEnqueueMapBuffer(queue, d_x, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 2000 * sizeof(float),
                                  100 * sizeof(float), 0, NULL, NULL, &err);
    CHECK(err, "map for writing");
    for (int i = 0; i < 100; i++) {
        m[i] = m[i] * 3.0f;
        rx[2000 + i] *= 3.0f;
    }
    CHECK(clEnqueueUnmapMemObject(queue, d_x, m, 0, NULL, NULL), "unmap");
    axpb(d_x, 1.0f, -2.0f, rx);

    /* 5. A kernel with atomics (its counter merged as a sum when split)
       reads and writes x. */
    float bound = 1500.0f;
    CHECK(clSetKernelArg(k_negate, 0, sizeof(cl_mem), &d_x), "arg");
    CHECK(clSetKernelArg(k_negate, 1, sizeof(cl_mem), &d_count), "arg");
    CHECK(clSetKernelArg(k_negate, 2, sizeof(float), &bound), "arg");
    CHECK(clSetKernelArg(k_negate, 3, sizeof(int), &n), "arg");
    CHECK(clEnqueueNDRangeKernel(queue, k_negate, 1, NULL, &global, &local, 0, NULL, NULL), "launch negate_above");
    for (int i = 0; i < n; i++)
        if (rx[i] > bound) {
            rx[i] = -rx[i];
            rcount++;
        }
    axpb(d_x, 1.0f, 2.0f, rx);

    /* 6. A partial fill, then a launch. */
    float seven = 7.0f;
    CHECK(clEnqueueFillBuffer(queue, d_x, &seven, sizeof seven, 3000 * sizeof(float), 64 * sizeof(float), 0, NULL, NULL), "fill");
    for (int i = 3000; i < 3064; i++)
        rx[i] = 7.0f;
    axpb(d_x, 1.0f, 1.0f, rx);

    /* 6b. The same buffer as float4 elements. */
    cl_kernel k_scale4 = clCreateKernel(program, "scale4", &err);
    CHECK(err, "clCreateKernel scale4");
    float half = 0.5f;
    int n4 = n / 4;
    size_t global4 = (size_t)n4;
    CHECK(clSetKernelArg(k_scale4, 0, sizeof(cl_mem), &d_x), "arg");
    CHECK(clSetKernelArg(k_scale4, 1, sizeof(float), &half), "arg");
    CHECK(clSetKernelArg(k_scale4, 2, sizeof(int), &n4), "arg");
    CHECK(clEnqueueNDRangeKernel(queue, k_scale4, 1, NULL, &global4, &local, 0, NULL, NULL), "launch scale4");
    for (int i = 0; i < n; i++)
        rx[i] *= 0.5f;
    clReleaseKernel(k_scale4);
    axpb(d_x, 1.0f, 1.0f, rx);

    int mismatches = 0;
    /* 7. y read through a sub-buffer of its second quarter. */
    cl_buffer_region region = {(size_t)(n / 4) * sizeof(float), (size_t)(n / 4) * sizeof(float)};
    cl_mem d_sub = clCreateSubBuffer(d_y, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    CHECK(err, "clCreateSubBuffer");
    CHECK(clEnqueueReadBuffer(queue, d_sub, CL_TRUE, 0, region.size, out, 0, NULL, NULL), "read sub-buffer");
    mismatches += compare("y through a sub-buffer", out, ry + n / 4, n / 4);
    clReleaseMemObject(d_sub);

    /* 8. A rectangle of x seen as 64 columns: rows 10..19, columns 5..14. */
    size_t origin[3] = {5 * sizeof(float), 10, 0}, host_origin[3] = {0, 0, 0};
    size_t rect[3] = {10 * sizeof(float), 10, 1};
    CHECK(clEnqueueReadBufferRect(queue, d_x, CL_TRUE, origin, host_origin, rect, 64 * sizeof(float), 0,
                                  10 * sizeof(float), 0, out, 0, NULL, NULL), "read rect");
    for (int r = 0; r < 10; r++)
        mismatches += compare("x rectangle", out + r * 10, rx + (10 + r) * 64 + 5, 10);

    /* 9. One more launch whose event a non-blocking read of x waits for. */
    axpb(d_x, 2.0f, 0.0f, rx);
    float two = 2.0f, none = 0.0f;
    CHECK(clSetKernelArg(k_axpb, 1, sizeof(float), &two), "arg");
    CHECK(clSetKernelArg(k_axpb, 2, sizeof(float), &none), "arg");
    cl_event ran, read;
    CHECK(clEnqueueNDRangeKernel(queue, k_axpb, 1, NULL, &global, &local, 0, NULL, &ran), "launch axpb");
    for (int i = 0; i < n; i++)
        rx[i] = 2.0f * rx[i];
    CHECK(clEnqueueReadBuffer(queue, d_x, CL_FALSE, 0, bytes, out, 1, &ran, &read), "read x");
    CHECK(clWaitForEvents(1, &read), "clWaitForEvents");
    mismatches += compare("x", out, rx, n);
    clReleaseEvent(ran);
    clReleaseEvent(read);

    /* 10. y through a map for reading, the count through a read. */
    float *my = clEnqueueMapBuffer(queue, d_y, CL_TRUE, CL_MAP_READ, 0, bytes, 0, NULL, NULL, &err);
    CHECK(err, "map for reading");
    mismatches += compare("y", my, ry, n);
    CHECK(clEnqueueUnmapMemObject(queue, d_y, my, 0, NULL, NULL), "unmap");
    CHECK(clEnqueueReadBuffer(queue, d_count, CL_TRUE, 0, sizeof count, &count, 0, NULL, NULL), "read count");
    if (count != rcount) {
        fprintf(stderr, "count: %d, want %d\n", count, rcount);
        mismatches++;
    }
    CHECK(clFinish(queue), "clFinish");
    printf("resident n=%d: %d mismatches\n", n, mismatches);

    clReleaseKernel(k_axpb);
    clReleaseKernel(k_neighbor);
    clReleaseKernel(k_negate);
    clReleaseProgram(program);
    clReleaseMemObject(d_x);
    clReleaseMemObject(d_y);
    clReleaseMemObject(d_count);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(x); free(y); free(rx); free(ry); free(out);
    return mismatches ? 1 : 0;
}

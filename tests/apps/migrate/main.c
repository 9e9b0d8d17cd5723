/* clEnqueueMigrateMemObjects on buffers that split launches left on clpart's
   devices: to the host (then a map and a read), to the device (then a
   launch), and with CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED before the
   program writes the buffer again, whole or through a sub-buffer. Each step is also done on the host;
   ./migrate N (N a multiple of 64). */
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

static void neighbor(cl_mem x, cl_mem y, const float *rx, float *ry)
{
    CHECK(clSetKernelArg(k_neighbor, 0, sizeof(cl_mem), &x), "arg");
    CHECK(clSetKernelArg(k_neighbor, 1, sizeof(cl_mem), &y), "arg");
    CHECK(clSetKernelArg(k_neighbor, 2, sizeof(int), &n), "arg");
    CHECK(clEnqueueNDRangeKernel(queue, k_neighbor, 1, NULL, &global, &local, 0, NULL, NULL), "launch neighbor");
    for (int i = 0; i < n; i++)
        ry[i] = rx[i] + (i > 0 ? rx[i - 1] : 0.0f);
}

int main(int argc, char **argv)
{
    n = argc > 1 ? atoi(argv[1]) : 4096;
    if (n < 64 || n % 64) { fprintf(stderr, "N must be a multiple of 64\n"); return 2; }
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
    cl_mem d_x = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK(err, "clCreateBuffer x");
    cl_mem d_y = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK(err, "clCreateBuffer y");
    CHECK(clEnqueueWriteBuffer(queue, d_x, CL_TRUE, 0, bytes, x, 0, NULL, NULL), "write x");
    CHECK(clEnqueueWriteBuffer(queue, d_y, CL_TRUE, 0, bytes, y, 0, NULL, NULL), "write y");

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

    int mismatches = 0;
    /* 1. Launches in a loop, then x migrated to the host and mapped for
       reading once the migration's event is complete. */
    for (int step = 0; step < 3; step++)
        axpb(d_x, 1.5f, 1.0f, rx);
    cl_event migrated;
    CHECK(clEnqueueMigrateMemObjects(queue, 1, &d_x, CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL, &migrated), "migrate x to the host");
    CHECK(clWaitForEvents(1, &migrated), "clWaitForEvents");
    cl_int status;
    CHECK(clGetEventInfo(migrated, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL), "clGetEventInfo");
    if (status != CL_COMPLETE) { fprintf(stderr, "migration: status %d\n", (int)status); return 1; }
    clReleaseEvent(migrated);
    float *m = clEnqueueMapBuffer(queue, d_x, CL_TRUE, CL_MAP_READ, 0, bytes, 0, NULL, NULL, &err);
    CHECK(err, "map x");
    mismatches += compare("x mapped after a migration to the host", m, rx, n);
    CHECK(clEnqueueUnmapMemObject(queue, d_x, m, 0, NULL, NULL), "unmap");

    /* 2. x and y migrated to the device (no wait, an in-order queue), then
       launches, then y to the host and a blocking read. */
    axpb(d_x, 0.5f, 2.0f, rx);
    cl_mem both[2] = {d_x, d_y};
    CHECK(clEnqueueMigrateMemObjects(queue, 2, both, 0, 0, NULL, NULL), "migrate x, y to the device");
    neighbor(d_x, d_y, rx, ry);
    CHECK(clEnqueueMigrateMemObjects(queue, 1, &d_y, CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL, NULL), "migrate y to the host");
    CHECK(clEnqueueReadBuffer(queue, d_y, CL_TRUE, 0, bytes, out, 0, NULL, NULL), "read y");
    mismatches += compare("y read after a migration to the host", out, ry, n);

    /* 3. y given up (contents undefined) and written again by the program,
       then read back through launches. */
    neighbor(d_x, d_y, rx, ry);
    CHECK(clEnqueueMigrateMemObjects(queue, 1, &d_y, CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED,
                                     0, NULL, NULL), "migrate y, contents undefined");
    for (int i = 0; i < n; i++)
        ry[i] = y[i] = (float)(i % 17);
    CHECK(clEnqueueWriteBuffer(queue, d_y, CL_TRUE, 0, bytes, y, 0, NULL, NULL), "write y");
    for (int step = 0; step < 2; step++)
        axpb(d_y, 2.0f, -1.0f, ry);
    CHECK(clFinish(queue), "clFinish");
    CHECK(clEnqueueReadBuffer(queue, d_y, CL_TRUE, 0, bytes, out, 0, NULL, NULL), "read y");
    mismatches += compare("y after it was given up and written", out, ry, n);
    /* 4. The first quarter of x given up through a sub-buffer and written
       again: the rest of x keeps the launches' results. */
    axpb(d_x, 1.0f, 0.5f, rx);
    cl_buffer_region quarter = {0, bytes / 4};
    cl_mem d_sub = clCreateSubBuffer(d_x, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &quarter, &err);
    CHECK(err, "clCreateSubBuffer");
    CHECK(clEnqueueMigrateMemObjects(queue, 1, &d_sub, CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED,
                                     0, NULL, NULL), "migrate a quarter of x, contents undefined");
    for (int i = 0; i < n / 4; i++)
        rx[i] = x[i] = (float)(i % 5);
    CHECK(clEnqueueWriteBuffer(queue, d_sub, CL_TRUE, 0, bytes / 4, x, 0, NULL, NULL), "write a quarter of x");
    clReleaseMemObject(d_sub);
    axpb(d_x, 2.0f, 0.0f, rx);
    CHECK(clEnqueueReadBuffer(queue, d_x, CL_TRUE, 0, bytes, out, 0, NULL, NULL), "read x");
    mismatches += compare("x", out, rx, n);

    printf("migrate n=%d: %d mismatches\n", n, mismatches);
    clReleaseKernel(k_axpb);
    clReleaseKernel(k_neighbor);
    clReleaseProgram(program);
    clReleaseMemObject(d_x);
    clReleaseMemObject(d_y);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(x); free(y); free(rx); free(ry); free(out);
    return mismatches ? 1 : 0;
}

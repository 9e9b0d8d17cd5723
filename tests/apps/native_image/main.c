/* Buffers that split launches left on clpart's devices, then seen by what
   the layer cannot look into: a native kernel (a host function over the
   buffer's memory), and a 1-D image made from the buffer
   (CL_MEM_OBJECT_IMAGE1D_BUFFER) read by a kernel and by clEnqueueReadImage,
   with launches over the buffer after. Each step is also done on the host;
   ./native_image N (N a multiple of 64). */
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

/* The native kernel's arguments: the buffer's handle, replaced by a
   pointer to its memory before the function runs. */
struct add_args {
    void *x;
    int n;
    float add;
};

static void add_native(void *p)
{
    struct add_args *a = p;
    float *x = a->x;
    for (int i = 0; i < a->n; i++)
        x[i] += a->add * (float)(i % 3);
}

int main(int argc, char **argv)
{
    n = argc > 1 ? atoi(argv[1]) : 4096;
    if (n < 64 || n % 64) { fprintf(stderr, "N must be a multiple of 64\n"); return 2; }
    global = (size_t)n;
    size_t bytes = sizeof(float) * n;
    float *x = malloc(bytes), *rx = malloc(bytes), *rout = malloc(bytes), *out = malloc(bytes);
    for (int i = 0; i < n; i++)
        rx[i] = x[i] = (float)(i % 1000);

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_device_exec_capabilities caps;
    cl_bool images;
    CHECK(clGetDeviceInfo(device, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof caps, &caps, NULL), "clGetDeviceInfo");
    CHECK(clGetDeviceInfo(device, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL), "clGetDeviceInfo");
    if (!(caps & CL_EXEC_NATIVE_KERNEL) || !images) {
        fprintf(stderr, "the device runs no native kernels or has no images\n");
        return 2;
    }
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err, "clCreateCommandQueue");
    cl_mem d_x = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK(err, "clCreateBuffer x");
    cl_mem d_out = clCreateBuffer(context, CL_MEM_WRITE_ONLY, bytes, NULL, &err);
    CHECK(err, "clCreateBuffer out");
    CHECK(clEnqueueWriteBuffer(queue, d_x, CL_TRUE, 0, bytes, x, 0, NULL, NULL), "write x");

    size_t len;
    char *source = read_file("kernel.cl", &len);
    cl_program program = clCreateProgramWithSource(context, 1, (const char **)&source, &len, &err);
    CHECK(err, "clCreateProgramWithSource");
    free(source);
    CHECK(clBuildProgram(program, 1, &device, NULL, NULL, NULL), "clBuildProgram");
    k_axpb = clCreateKernel(program, "axpb", &err);
    CHECK(err, "clCreateKernel axpb");
    cl_kernel k_twice = clCreateKernel(program, "twice_image", &err);
    CHECK(err, "clCreateKernel twice_image");

    int mismatches = 0;
    /* 1. Launches in a loop, then a native kernel over x, then launches. */
    for (int step = 0; step < 3; step++)
        axpb(d_x, 1.5f, 1.0f, rx);
    struct add_args args = {NULL, n, 0.25f};
    const void *loc[1] = {&args.x};
    cl_event ran;
    CHECK(clEnqueueNativeKernel(queue, add_native, &args, sizeof args, 1, &d_x, loc, 0, NULL, &ran), "clEnqueueNativeKernel");
    for (int i = 0; i < n; i++)
        rx[i] += 0.25f * (float)(i % 3);
    CHECK(clWaitForEvents(1, &ran), "clWaitForEvents");
    clReleaseEvent(ran);
    for (int step = 0; step < 2; step++)
        axpb(d_x, 0.5f, 2.0f, rx);
    CHECK(clEnqueueReadBuffer(queue, d_x, CL_TRUE, 0, bytes, out, 0, NULL, NULL), "read x");
    mismatches += compare("x after a native kernel", out, rx, n);

    /* 2. One more launch, then an image made from x, read by a kernel. */
    axpb(d_x, 2.0f, -3.0f, rx);
    cl_image_format format = {CL_R, CL_FLOAT};
    cl_image_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
    desc.image_width = (size_t)n;
    desc.buffer = d_x;
    cl_mem d_image = clCreateImage(context, CL_MEM_READ_ONLY, &format, &desc, NULL, &err);
    CHECK(err, "clCreateImage");
    CHECK(clSetKernelArg(k_twice, 0, sizeof(cl_mem), &d_image), "arg");
    CHECK(clSetKernelArg(k_twice, 1, sizeof(cl_mem), &d_out), "arg");
    CHECK(clSetKernelArg(k_twice, 2, sizeof(int), &n), "arg");
    CHECK(clEnqueueNDRangeKernel(queue, k_twice, 1, NULL, &global, &local, 0, NULL, NULL), "launch twice_image");
    for (int i = 0; i < n; i++)
        rout[i] = 2.0f * rx[i];
    CHECK(clEnqueueReadBuffer(queue, d_out, CL_TRUE, 0, bytes, out, 0, NULL, NULL), "read out");
    mismatches += compare("out from the image", out, rout, n);

    /* 3. Launches over x while the image shares its memory, then x read
       through the image and through the buffer. */
    for (int step = 0; step < 2; step++)
        axpb(d_x, 1.0f, 1.0f, rx);
    size_t origin[3] = {0, 0, 0}, region[3] = {(size_t)n, 1, 1};
    CHECK(clEnqueueReadImage(queue, d_image, CL_TRUE, origin, region, 0, 0, out, 0, NULL, NULL), "read image");
    mismatches += compare("x through the image", out, rx, n);
    CHECK(clEnqueueReadBuffer(queue, d_x, CL_TRUE, 0, bytes, out, 0, NULL, NULL), "read x");
    mismatches += compare("x", out, rx, n);

    printf("native_image n=%d: %d mismatches\n", n, mismatches);
    clReleaseMemObject(d_image);
    clReleaseKernel(k_axpb);
    clReleaseKernel(k_twice);
    clReleaseProgram(program);
    clReleaseMemObject(d_x);
    clReleaseMemObject(d_out);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(x); free(rx); free(rout); free(out);
    return mismatches ? 1 : 0;
}

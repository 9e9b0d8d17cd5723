/* FDTD-2D: three kernels per time step over T steps: ./fdtd2d NX NY T. */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

/* Wall-clock milliseconds, for the device section's time. */
static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static cl_context context;
static cl_command_queue queue;
static cl_device_id device;

static void setup(void)
{
    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err, "clCreateCommandQueue");
}

static cl_mem buffer(cl_mem_flags flags, size_t bytes, void *host)
{
    cl_int err;
    cl_mem m = clCreateBuffer(context, flags, bytes, host, &err);
    CHECK(err, "clCreateBuffer");
    return m;
}

static size_t round_up(int n, size_t m)
{
    return ((size_t)n + m - 1) / m * m;
}

int main(int argc, char **argv)
{
    int nx = argc > 1 ? atoi(argv[1]) : 64;
    int ny = argc > 2 ? atoi(argv[2]) : 80;
    int steps = argc > 3 ? atoi(argv[3]) : 4;
    size_t bytes = sizeof(float) * nx * ny;
    float *ex = malloc(bytes), *ey = malloc(bytes), *hz = malloc(bytes);
    float *rex = malloc(bytes), *rey = malloc(bytes), *rhz = malloc(bytes);
    for (int i = 0; i < nx; i++)
        for (int j = 0; j < ny; j++) {
            rex[i * ny + j] = ex[i * ny + j] = (float)(i * (j + 1)) / nx;
            rey[i * ny + j] = ey[i * ny + j] = (float)(i * (j + 2)) / ny;
            rhz[i * ny + j] = hz[i * ny + j] = (float)(i * (j + 3)) / nx;
        }

    setup();
    cl_mem d_ex = buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, ex);
    cl_mem d_ey = buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, ey);
    cl_mem d_hz = buffer(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, hz);

    cl_int err;
    cl_program program = build(context, device, "kernel.cl", NULL);
    cl_kernel k_ey = clCreateKernel(program, "fdtd_ey", &err);
    CHECK(err, "clCreateKernel fdtd_ey");
    cl_kernel k_ex = clCreateKernel(program, "fdtd_ex", &err);
    CHECK(err, "clCreateKernel fdtd_ex");
    cl_kernel k_hz = clCreateKernel(program, "fdtd_hz", &err);
    CHECK(err, "clCreateKernel fdtd_hz");
    CHECK(clSetKernelArg(k_ey, 0, sizeof(cl_mem), &d_ey), "arg");
    CHECK(clSetKernelArg(k_ey, 1, sizeof(cl_mem), &d_hz), "arg");
    CHECK(clSetKernelArg(k_ey, 3, sizeof(int), &nx), "arg");
    CHECK(clSetKernelArg(k_ey, 4, sizeof(int), &ny), "arg");
    CHECK(clSetKernelArg(k_ex, 0, sizeof(cl_mem), &d_ex), "arg");
    CHECK(clSetKernelArg(k_ex, 1, sizeof(cl_mem), &d_hz), "arg");
    CHECK(clSetKernelArg(k_ex, 2, sizeof(int), &nx), "arg");
    CHECK(clSetKernelArg(k_ex, 3, sizeof(int), &ny), "arg");
    CHECK(clSetKernelArg(k_hz, 0, sizeof(cl_mem), &d_ex), "arg");
    CHECK(clSetKernelArg(k_hz, 1, sizeof(cl_mem), &d_ey), "arg");
    CHECK(clSetKernelArg(k_hz, 2, sizeof(cl_mem), &d_hz), "arg");
    CHECK(clSetKernelArg(k_hz, 3, sizeof(int), &nx), "arg");
    CHECK(clSetKernelArg(k_hz, 4, sizeof(int), &ny), "arg");

    size_t local[2] = {16, 8};
    size_t global[2] = {round_up(ny, 16), round_up(nx, 8)};
    double t0 = now_ms();
    for (int t = 0; t < steps; t++) {
        float fict = (float)t;
        CHECK(clSetKernelArg(k_ey, 2, sizeof(float), &fict), "arg fict");
        CHECK(clEnqueueNDRangeKernel(queue, k_ey, 2, NULL, global, local, 0, NULL, NULL), "launch ey");
        CHECK(clEnqueueNDRangeKernel(queue, k_ex, 2, NULL, global, local, 0, NULL, NULL), "launch ex");
        CHECK(clEnqueueNDRangeKernel(queue, k_hz, 2, NULL, global, local, 0, NULL, NULL), "launch hz");
    }
    CHECK(clFinish(queue), "clFinish");
    printf("device section: %.1f ms\n", now_ms() - t0);
    CHECK(clEnqueueReadBuffer(queue, d_ex, CL_TRUE, 0, bytes, ex, 0, NULL, NULL), "read ex");
    CHECK(clEnqueueReadBuffer(queue, d_ey, CL_TRUE, 0, bytes, ey, 0, NULL, NULL), "read ey");
    CHECK(clEnqueueReadBuffer(queue, d_hz, CL_TRUE, 0, bytes, hz, 0, NULL, NULL), "read hz");

    for (int t = 0; t < steps; t++) {
        for (int j = 0; j < ny; j++)
            rey[j] = (float)t;
        for (int i = 1; i < nx; i++)
            for (int j = 0; j < ny; j++)
                rey[i * ny + j] = rey[i * ny + j] - 0.5f * (rhz[i * ny + j] - rhz[(i - 1) * ny + j]);
        for (int i = 0; i < nx; i++)
            for (int j = 1; j < ny; j++)
                rex[i * ny + j] = rex[i * ny + j] - 0.5f * (rhz[i * ny + j] - rhz[i * ny + j - 1]);
        for (int i = 0; i < nx - 1; i++)
            for (int j = 0; j < ny - 1; j++)
                rhz[i * ny + j] = rhz[i * ny + j] - 0.7f * (rex[i * ny + j + 1] - rex[i * ny + j]
                                                            + rey[(i + 1) * ny + j] - rey[i * ny + j]);
    }
    int mismatches = 0;
    for (int i = 0; i < nx * ny; i++)
        mismatches += differs(ex[i], rex[i]) + differs(ey[i], rey[i]) + differs(hz[i], rhz[i]);
    printf("fdtd2d %dx%d steps=%d: %d mismatches\n", nx, ny, steps, mismatches);

    clReleaseKernel(k_ey);
    clReleaseKernel(k_ex);
    clReleaseKernel(k_hz);
    clReleaseProgram(program);
    clReleaseMemObject(d_ex);
    clReleaseMemObject(d_ey);
    clReleaseMemObject(d_hz);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(ex); free(ey); free(hz); free(rex); free(rey); free(rhz);
    return mismatches ? 1 : 0;
}

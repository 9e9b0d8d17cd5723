/* A 2-D Jacobi solver that checks its convergence at every sweep: per
   step a relaxation kernel and a reduction of the largest change, the
   reduction finished by the last work-group to arrive (a ticket drawn
   from an atomic counter), its result read every ten steps.
   ./residual N STEPS */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <CL/cl.h>

#define CHECK(err, what) do { if ((err) != CL_SUCCESS) { \
    fprintf(stderr, "%s failed: %d\n", what, (int)(err)); exit(2); } } while (0)
#define WG 256
#define GROUPS 64

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

/* Wall-clock milliseconds, for the device section's time. */
static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 128;
    int steps = argc > 2 ? atoi(argv[2]) : 20;
    size_t bytes = sizeof(float) * n * n;
    float *u = malloc(bytes), *v = malloc(bytes), *out = malloc(bytes);
    float *changes = calloc(steps, sizeof(float));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            u[i * n + j] = v[i * n + j] =
                (i == 0 || j == 0 || i == n - 1 || j == n - 1) ? (float)((i + 2 * j) % 9) : 0.0f;

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err, "clCreateCommandQueue");

    cl_mem d_u = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, u, &err);
    CHECK(err, "clCreateBuffer u");
    cl_mem d_v = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, v, &err);
    CHECK(err, "clCreateBuffer v");
    cl_mem d_partial = clCreateBuffer(context, CL_MEM_READ_WRITE, GROUPS * sizeof(float), NULL, &err);
    CHECK(err, "clCreateBuffer partial");
    cl_uint zero = 0;
    cl_mem d_ticket = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                     sizeof(cl_uint), &zero, &err);
    CHECK(err, "clCreateBuffer ticket");
    cl_mem d_result = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(float), NULL, &err);
    CHECK(err, "clCreateBuffer result");

    size_t len;
    char *source = read_file("kernel.cl", &len);
    cl_program program = clCreateProgramWithSource(context, 1, (const char **)&source, &len, &err);
    CHECK(err, "clCreateProgramWithSource");
    free(source);
    CHECK(clBuildProgram(program, 1, &device, NULL, NULL, NULL), "clBuildProgram");
    cl_kernel relax = clCreateKernel(program, "relax", &err);
    CHECK(err, "clCreateKernel relax");
    cl_kernel change = clCreateKernel(program, "change", &err);
    CHECK(err, "clCreateKernel change");
    CHECK(clSetKernelArg(relax, 2, sizeof(int), &n), "relax n");
    CHECK(clSetKernelArg(change, 2, sizeof(cl_mem), &d_partial), "change partial");
    CHECK(clSetKernelArg(change, 3, sizeof(cl_mem), &d_ticket), "change ticket");
    CHECK(clSetKernelArg(change, 4, sizeof(cl_mem), &d_result), "change result");
    CHECK(clSetKernelArg(change, 5, sizeof(int), &n), "change n");

    size_t local[2] = {32, 8};
    size_t global[2] = {((size_t)n + 31) / 32 * 32, ((size_t)n + 7) / 8 * 8};
    size_t red_local = WG, red_global = WG * GROUPS;
    double t0 = now_ms();
    for (int t = 0; t < steps; t++) {
        cl_mem from = t % 2 == 0 ? d_u : d_v;
        cl_mem to = t % 2 == 0 ? d_v : d_u;
        CHECK(clSetKernelArg(relax, 0, sizeof(cl_mem), &from), "relax u");
        CHECK(clSetKernelArg(relax, 1, sizeof(cl_mem), &to), "relax v");
        CHECK(clEnqueueNDRangeKernel(queue, relax, 2, NULL, global, local, 0, NULL, NULL), "relax");
        CHECK(clSetKernelArg(change, 0, sizeof(cl_mem), &from), "change u");
        CHECK(clSetKernelArg(change, 1, sizeof(cl_mem), &to), "change v");
        CHECK(clEnqueueNDRangeKernel(queue, change, 1, NULL, &red_global, &red_local, 0, NULL, NULL),
              "change");
        if (t % 10 == 9 || t == steps - 1)
            CHECK(clEnqueueReadBuffer(queue, d_result, CL_TRUE, 0, sizeof(float), &changes[t], 0,
                                      NULL, NULL), "read result");
    }
    CHECK(clFinish(queue), "clFinish");
    fprintf(stderr, "device section: %.1f ms\n", now_ms() - t0);
    cl_mem last = steps % 2 == 0 ? d_u : d_v;
    CHECK(clEnqueueReadBuffer(queue, last, CL_TRUE, 0, bytes, out, 0, NULL, NULL), "read");

    /* the reference: the same sweeps and changes on the host */
    int mismatches = 0;
    for (int t = 0; t < steps; t++) {
        float *from = t % 2 == 0 ? u : v;
        float *to = t % 2 == 0 ? v : u;
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                to[i * n + j] = 0.25f * (from[(i - 1) * n + j] + from[(i + 1) * n + j]
                                         + from[i * n + j - 1] + from[i * n + j + 1]);
        float m = 0.0f;
        for (int k = 0; k < n * n; k++)
            m = fmaxf(m, fabsf(to[k] - from[k]));
        if ((t % 10 == 9 || t == steps - 1) && changes[t] != m)
            mismatches++;
    }
    float *ref = steps % 2 == 0 ? u : v;
    for (int i = 0; i < n * n; i++)
        if (out[i] != ref[i])
            mismatches++;
    printf("residual n=%d steps=%d (last change %.6f): %d mismatches\n", n, steps,
           changes[steps - 1], mismatches);

    clReleaseKernel(relax);
    clReleaseKernel(change);
    clReleaseProgram(program);
    clReleaseMemObject(d_u);
    clReleaseMemObject(d_v);
    clReleaseMemObject(d_partial);
    clReleaseMemObject(d_ticket);
    clReleaseMemObject(d_result);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(u); free(v); free(out); free(changes);
    return mismatches ? 1 : 0;
}

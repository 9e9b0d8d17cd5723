/* Several host threads sharing one context, as servers and pipelines do:
   each thread has its own in-order queue and buffers and runs its own
   relaxation loop (a kernel object of its own, the step `t` changing at
   every launch), all reading one weights buffer. Checked against the CPU;
   prints a hash of every thread's result. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <CL/cl.h>

#define CHECK(err, what) do { if ((err) != CL_SUCCESS) { \
    fprintf(stderr, "%s failed: %d\n", what, (int)(err)); exit(2); } } while (0)

#define THREADS 3

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

static unsigned long hash(unsigned long h, const float *v, int n)
{
    const unsigned char *b = (const unsigned char *)v;
    for (size_t i = 0; i < (size_t)n * sizeof(float); i++)
        h = (h ^ b[i]) * 1099511628211UL;
    return h;
}

/* exact in binary: products and sums of these round the same with or
   without contraction */
static const float weights[3] = {0.25f, 0.5f, 0.25f};

struct job {
    cl_context context;
    cl_device_id device;
    cl_program program;
    cl_mem w;
    int n, steps, seed;
    float *got;
};

static void *run(void *arg)
{
    struct job *j = arg;
    cl_int err;
    size_t bytes = (size_t)j->n * sizeof(float);
    float *v = malloc(bytes);
    for (int i = 0; i < j->n; i++)
        v[i] = (float)((i * 7 + j->seed) % 64);
    cl_command_queue q = clCreateCommandQueue(j->context, j->device, 0, &err);
    CHECK(err, "clCreateCommandQueue");
    cl_mem a = clCreateBuffer(j->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, v, &err);
    CHECK(err, "clCreateBuffer a");
    cl_mem b = clCreateBuffer(j->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK(err, "clCreateBuffer b");
    cl_kernel k = clCreateKernel(j->program, "relax", &err);
    CHECK(err, "clCreateKernel");
    size_t global = (size_t)j->n, local = 64;
    for (int t = 0; t < j->steps; t++) {
        cl_mem from = t % 2 ? b : a, to = t % 2 ? a : b;
        CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &from), "arg 0");
        CHECK(clSetKernelArg(k, 1, sizeof(cl_mem), &to), "arg 1");
        CHECK(clSetKernelArg(k, 2, sizeof(cl_mem), &j->w), "arg 2");
        CHECK(clSetKernelArg(k, 3, sizeof(int), &j->n), "arg 3");
        CHECK(clSetKernelArg(k, 4, sizeof(int), &t), "arg 4");
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL), "launch");
    }
    CHECK(clFinish(q), "clFinish");
    CHECK(clEnqueueReadBuffer(q, j->steps % 2 ? b : a, CL_TRUE, 0, bytes, j->got, 0, NULL, NULL),
          "read");
    clReleaseKernel(k);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseCommandQueue(q);
    free(v);
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4096; /* a multiple of 64 */
    int steps = argc > 2 ? atoi(argv[2]) : 40;
    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    size_t len;
    char *source = read_file("kernel.cl", &len);
    cl_program program = clCreateProgramWithSource(context, 1, (const char **)&source, &len, &err);
    CHECK(err, "clCreateProgramWithSource");
    err = clBuildProgram(program, 1, &device, "", NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[4096];
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build failed:\n%s\n", log);
        return 2;
    }
    cl_mem w = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof weights,
                              (void *)weights, &err);
    CHECK(err, "clCreateBuffer w");

    struct job jobs[THREADS];
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++) {
        jobs[i] = (struct job){context, device, program, w, n, steps + i, i * 11,
                               malloc((size_t)n * sizeof(float))};
        if (pthread_create(&threads[i], NULL, run, &jobs[i]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 2;
        }
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);

    int mismatches = 0;
    unsigned long h = 1469598103934665603UL;
    float *x = malloc((size_t)n * sizeof(float)), *y = malloc((size_t)n * sizeof(float));
    for (int i = 0; i < THREADS; i++) {
        for (int e = 0; e < n; e++)
            x[e] = (float)((e * 7 + jobs[i].seed) % 64);
        for (int t = 0; t < jobs[i].steps; t++) {
            for (int e = 0; e < n; e++) {
                float left = e > 0 ? x[e - 1] : x[e], right = e < n - 1 ? x[e + 1] : x[e];
                y[e] = weights[0] * left + weights[1] * x[e] + weights[2] * right
                       + (float)t * (1.0f / 1024.0f);
            }
            float *s = x; x = y; y = s;
        }
        for (int e = 0; e < n; e++)
            mismatches += jobs[i].got[e] != x[e];
        h = hash(h, jobs[i].got, n);
        free(jobs[i].got);
    }
    printf("result %016lx\n", h);
    printf("host_threads n=%d steps=%d threads=%d: %d mismatches\n", n, steps, THREADS, mismatches);
    clReleaseMemObject(w);
    clReleaseProgram(program);
    clReleaseContext(context);
    free(source); free(x); free(y);
    return mismatches != 0;
}

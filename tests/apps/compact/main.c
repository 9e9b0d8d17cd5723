/* Stream compaction over ROUNDS rounds: each round resets the counter,
   keeps the elements above a rising threshold and reads how many were
   kept; the host checks the counts and, at the end, the kept elements in
   order of value (the slots depend on the work-items' order).
   ./compact N ROUNDS */
#define _POSIX_C_SOURCE 199309L
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

/* Wall-clock milliseconds, for the device section's time. */
static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4096;
    int rounds = argc > 2 ? atoi(argv[2]) : 10;
    size_t bytes = sizeof(float) * n;
    float *in = malloc(bytes), *out = malloc(bytes), *ref = malloc(bytes);
    cl_uint *counts = calloc(rounds, sizeof(cl_uint));
    for (int i = 0; i < n; i++)
        in[i] = (float)((i * 2654435761u) % 10007) / 10007.0f;

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err, "clCreateCommandQueue");
    cl_mem d_in = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, in, &err);
    CHECK(err, "clCreateBuffer in");
    cl_mem d_out = clCreateBuffer(context, CL_MEM_WRITE_ONLY, bytes, NULL, &err);
    CHECK(err, "clCreateBuffer out");
    cl_mem d_count = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(cl_uint), NULL, &err);
    CHECK(err, "clCreateBuffer count");

    size_t len;
    char *source = read_file("kernel.cl", &len);
    cl_program program = clCreateProgramWithSource(context, 1, (const char **)&source, &len, &err);
    CHECK(err, "clCreateProgramWithSource");
    free(source);
    CHECK(clBuildProgram(program, 1, &device, NULL, NULL, NULL), "clBuildProgram");
    cl_kernel kernel = clCreateKernel(program, "keep", &err);
    CHECK(err, "clCreateKernel");
    CHECK(clSetKernelArg(kernel, 0, sizeof(cl_mem), &d_in), "arg 0");
    CHECK(clSetKernelArg(kernel, 1, sizeof(cl_mem), &d_out), "arg 1");
    CHECK(clSetKernelArg(kernel, 2, sizeof(cl_mem), &d_count), "arg 2");
    CHECK(clSetKernelArg(kernel, 4, sizeof(int), &n), "arg 4");
    size_t local = 64, global = ((size_t)n + 63) / 64 * 64;
    double t0 = now_ms();
    for (int r = 0; r < rounds; r++) {
        cl_uint zero = 0;
        float threshold = (float)r / rounds;
        CHECK(clEnqueueWriteBuffer(queue, d_count, CL_FALSE, 0, sizeof zero, &zero, 0, NULL, NULL),
              "reset count");
        CHECK(clSetKernelArg(kernel, 3, sizeof(float), &threshold), "arg 3");
        CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL), "launch");
        CHECK(clEnqueueReadBuffer(queue, d_count, CL_TRUE, 0, sizeof(cl_uint), &counts[r], 0, NULL,
                                  NULL), "read count");
    }
    CHECK(clFinish(queue), "clFinish");
    fprintf(stderr, "device section: %.1f ms\n", now_ms() - t0);
    cl_uint kept = counts[rounds - 1];
    CHECK(clEnqueueReadBuffer(queue, d_out, CL_TRUE, 0, kept * sizeof(float), out, 0, NULL, NULL),
          "read out");

    int mismatches = 0;
    cl_uint want = 0;
    for (int r = 0; r < rounds; r++) {
        float threshold = (float)r / rounds;
        want = 0;
        for (int i = 0; i < n; i++)
            if (in[i] > threshold)
                ref[want++] = in[i];
        if (counts[r] != want)
            mismatches++;
    }
    qsort(out, kept, sizeof(float), by_value);
    qsort(ref, want, sizeof(float), by_value);
    for (cl_uint i = 0; i < kept && i < want; i++)
        if (out[i] != ref[i])
            mismatches++;
    printf("compact n=%d rounds=%d (kept %u): %d mismatches\n", n, rounds, kept, mismatches);
    return mismatches != 0;
}

/* Needleman-Wunsch over an n x n alignment (n a multiple of the block
   size 16), by blocks: one launch per anti-diagonal of blocks, first the
   upper-left triangle (nw_upper, 1 .. nb blocks), then the lower-right
   one (nw_lower, nb - 1 .. 1), the kernel built with -DBS=16. The host
   checks the whole score matrix against its own recurrence.
   ./nw N PENALTY */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <CL/cl.h>

#define CHECK(err, what) do { if ((err) != CL_SUCCESS) { \
    fprintf(stderr, "%s failed: %d\n", what, (int)(err)); exit(2); } } while (0)
#define BLOCK 16

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

static int max3(int a, int b, int c)
{
    int m = a > b ? a : b;
    return m > c ? m : c;
}

/* A BLOSUM-like substitution score from two residues. */
static int substitution(int a, int b)
{
    return a == b ? 5 : ((a + b) % 7) - 4;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 128;
    int penalty = argc > 2 ? atoi(argv[2]) : 10;
    if (n <= 0 || n % BLOCK) { fprintf(stderr, "N must be a positive multiple of %d\n", BLOCK); return 2; }
    int cols = n + 1, nb = n / BLOCK;
    size_t cells = (size_t)cols * cols, bytes = cells * sizeof(int);
    int *score = calloc(cells, sizeof(int)), *reference = calloc(cells, sizeof(int));
    int *out = malloc(bytes);
    int *seq_a = malloc(sizeof(int) * cols), *seq_b = malloc(sizeof(int) * cols);
    for (int i = 0; i < cols; i++) {
        seq_a[i] = (int)((i * 2654435761u) >> 7) % 20;
        seq_b[i] = (int)((i * 40503u + 11) >> 3) % 20;
    }
    for (int i = 1; i < cols; i++)
        for (int j = 1; j < cols; j++)
            reference[i * cols + j] = substitution(seq_a[i], seq_b[j]);
    for (int i = 0; i < cols; i++) {
        score[i * cols] = -i * penalty;
        score[i] = -i * penalty;
    }

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err, "clCreateCommandQueue");
    cl_mem d_score = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, score, &err);
    CHECK(err, "clCreateBuffer score");
    cl_mem d_reference = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes,
                                        reference, &err);
    CHECK(err, "clCreateBuffer reference");

    size_t len;
    char *source = read_file("kernel.cl", &len);
    cl_program program = clCreateProgramWithSource(context, 1, (const char **)&source, &len, &err);
    CHECK(err, "clCreateProgramWithSource");
    free(source);
    char options[64];
    snprintf(options, sizeof options, "-DBS=%d", BLOCK);
    err = clBuildProgram(program, 1, &device, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[8192];
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build failed:\n%s\n", log);
        return 2;
    }
    cl_kernel upper = clCreateKernel(program, "nw_upper", &err);
    CHECK(err, "clCreateKernel nw_upper");
    cl_kernel lower = clCreateKernel(program, "nw_lower", &err);
    CHECK(err, "clCreateKernel nw_lower");
    cl_kernel both[2] = {upper, lower};
    for (int k = 0; k < 2; k++) {
        CHECK(clSetKernelArg(both[k], 0, sizeof(cl_mem), &d_score), "arg 0");
        CHECK(clSetKernelArg(both[k], 1, sizeof(cl_mem), &d_reference), "arg 1");
        CHECK(clSetKernelArg(both[k], 2, sizeof(int), &cols), "arg 2");
        CHECK(clSetKernelArg(both[k], 3, sizeof(int), &penalty), "arg 3");
    }
    CHECK(clSetKernelArg(lower, 5, sizeof(int), &nb), "arg 5");
    size_t local = BLOCK;
    double t0 = now_ms();
    for (int i = 1; i <= nb; i++) {
        size_t global = (size_t)i * BLOCK;
        CHECK(clSetKernelArg(upper, 4, sizeof(int), &i), "arg 4");
        CHECK(clEnqueueNDRangeKernel(queue, upper, 1, NULL, &global, &local, 0, NULL, NULL), "nw_upper");
    }
    for (int i = nb - 1; i >= 1; i--) {
        size_t global = (size_t)i * BLOCK;
        CHECK(clSetKernelArg(lower, 4, sizeof(int), &i), "arg 4");
        CHECK(clEnqueueNDRangeKernel(queue, lower, 1, NULL, &global, &local, 0, NULL, NULL), "nw_lower");
    }
    CHECK(clFinish(queue), "clFinish");
    fprintf(stderr, "device section: %.1f ms\n", now_ms() - t0);
    CHECK(clEnqueueReadBuffer(queue, d_score, CL_TRUE, 0, bytes, out, 0, NULL, NULL), "read score");

    for (int i = 1; i < cols; i++)
        for (int j = 1; j < cols; j++)
            score[i * cols + j] = max3(score[(i - 1) * cols + j - 1] + reference[i * cols + j],
                                       score[i * cols + j - 1] - penalty,
                                       score[(i - 1) * cols + j] - penalty);
    int mismatches = 0;
    for (size_t i = 0; i < cells; i++)
        if (out[i] != score[i])
            mismatches++;
    printf("nw n=%d penalty=%d (score %d): %d mismatches\n", n, penalty, out[cells - 1], mismatches);

    clReleaseKernel(upper);
    clReleaseKernel(lower);
    clReleaseProgram(program);
    clReleaseMemObject(d_score);
    clReleaseMemObject(d_reference);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(score); free(reference); free(out); free(seq_a); free(seq_b);
    return mismatches != 0;
}

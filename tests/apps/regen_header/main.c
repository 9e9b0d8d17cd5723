/* A host that generates its kernel's header: it writes gen.h in a scratch
 * folder, builds program A with -I., writes gen.h again with another
 * operation and builds program B from the same source, then builds C the
 * same way in a second folder, goes back to the first and only then
 * launches A, B and C. Each program computes what its header said when it
 * was built. Prints a hash of each output and the mismatch count against
 * the CPU. */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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

static void write_header(const char *op)
{
    FILE *f = fopen("gen.h", "w");
    if (!f) { fprintf(stderr, "cannot write gen.h\n"); exit(2); }
    fprintf(f, "#define OP(x) %s\n", op);
    fclose(f);
}

static unsigned long hash(const float *v, int n)
{
    unsigned long h = 1469598103934665603UL;
    const unsigned char *b = (const unsigned char *)v;
    for (size_t i = 0; i < (size_t)n * sizeof(float); i++)
        h = (h ^ b[i]) * 1099511628211UL;
    return h;
}

static cl_program build(cl_context context, cl_device_id device, char *source, size_t len)
{
    cl_int err;
    cl_program p = clCreateProgramWithSource(context, 1, (const char **)&source, &len, &err);
    CHECK(err, "clCreateProgramWithSource");
    err = clBuildProgram(p, 1, &device, "-I.", NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[4096];
        clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build failed:\n%s\n", log);
        exit(2);
    }
    return p;
}

static void run(cl_command_queue queue, cl_kernel k, cl_mem dx, cl_mem dy, int n, float *y)
{
    CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &dx), "arg 0");
    CHECK(clSetKernelArg(k, 1, sizeof(cl_mem), &dy), "arg 1");
    CHECK(clSetKernelArg(k, 2, sizeof(int), &n), "arg 2");
    size_t global = (size_t)n, local = 64;
    CHECK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL), "launch");
    CHECK(clFinish(queue), "clFinish");
    CHECK(clEnqueueReadBuffer(queue, dy, CL_TRUE, 0, (size_t)n * sizeof(float), y, 0, NULL, NULL), "read");
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 8192;
    size_t bytes = (size_t)n * sizeof(float);
    float *x = malloc(bytes), *ya = malloc(bytes), *yb = malloc(bytes), *yc = malloc(bytes);
    for (int i = 0; i < n; i++)
        x[i] = (float)(i % 101) * 0.25f - 7.0f;

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err, "clCreateCommandQueue");
    cl_mem dx = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, x, &err);
    CHECK(err, "clCreateBuffer x");
    cl_mem dy = clCreateBuffer(context, CL_MEM_WRITE_ONLY, bytes, NULL, &err);
    CHECK(err, "clCreateBuffer y");

    size_t len;
    char *source = read_file("kernel.cl", &len);
    char back[4096], d1[] = "/tmp/regen_header.XXXXXX", d2[] = "/tmp/regen_header.XXXXXX";
    if (!getcwd(back, sizeof back) || !mkdtemp(d1) || !mkdtemp(d2) || chdir(d1) != 0) {
        fprintf(stderr, "cannot make the scratch folders\n");
        return 2;
    }
    write_header("((x) * 2.0f)");
    cl_program a = build(context, device, source, len);
    write_header("((x) + 100.0f)");
    cl_program b = build(context, device, source, len);
    if (chdir(d2) != 0) { fprintf(stderr, "cannot enter %s\n", d2); return 2; }
    write_header("((x) * 3.0f - 1.0f)");
    cl_program c = build(context, device, source, len);
    /* launched from the first folder, whose gen.h now says x + 100 */
    if (chdir(d1) != 0) { fprintf(stderr, "cannot enter %s\n", d1); return 2; }

    cl_kernel ka = clCreateKernel(a, "apply", &err);
    CHECK(err, "clCreateKernel a");
    cl_kernel kb = clCreateKernel(b, "apply", &err);
    CHECK(err, "clCreateKernel b");
    cl_kernel kc = clCreateKernel(c, "apply", &err);
    CHECK(err, "clCreateKernel c");
    run(queue, ka, dx, dy, n, ya);
    run(queue, kb, dx, dy, n, yb);
    run(queue, kc, dx, dy, n, yc);

    unlink("gen.h");
    if (chdir(d2) != 0 || unlink("gen.h") != 0 || chdir(back) != 0 || rmdir(d1) != 0 || rmdir(d2) != 0) {
        fprintf(stderr, "cannot remove the scratch folders\n");
        return 2;
    }

    int mismatches = 0;
    for (int i = 0; i < n; i++) {
        if (ya[i] != x[i] * 2.0f) mismatches++;
        if (yb[i] != x[i] + 100.0f) mismatches++;
        if (yc[i] != x[i] * 3.0f - 1.0f) mismatches++;
    }
    printf("A %016lx\nB %016lx\nC %016lx\n", hash(ya, n), hash(yb, n), hash(yc, n));
    printf("regen_header n=%d: %d mismatches\n", n, mismatches);
    return mismatches != 0;
}

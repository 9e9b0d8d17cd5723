/* Programs made the other ways: a kernel compiled with a header passed in
   memory (clCompileProgram), linked with a library program
   (clLinkProgram); a program built from source on one context and again,
   from its binary (clCreateProgramWithBinary), on a second context over
   the same device, whose queue runs the next launches; data moved between
   the two contexts through the host: ./linked_binary N ROUNDS. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

static cl_program from_source(cl_context context, const char *path)
{
    cl_int err;
    size_t len;
    char *source = read_file(path, &len);
    cl_program p = clCreateProgramWithSource(context, 1, (const char **)&source, &len, &err);
    CHECK(err, "clCreateProgramWithSource");
    free(source);
    return p;
}

static int differs(float got, float want)
{
    return fabsf(got - want) > 1e-3f * fmaxf(1.0f, fabsf(want));
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 5000;
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    size_t bytes = sizeof(float) * (size_t)n;
    float *x = malloc(bytes), *y = malloc(bytes), *ref = malloc(bytes);
    for (int i = 0; i < n; i++)
        x[i] = (float)(i % 53) - 20.0f;

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context ctx1 = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext 1");
    cl_context ctx2 = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext 2");
    cl_command_queue q1 = clCreateCommandQueue(ctx1, device, 0, &err);
    CHECK(err, "clCreateCommandQueue 1");
    cl_command_queue q2 = clCreateCommandQueue(ctx2, device, 0, &err);
    CHECK(err, "clCreateCommandQueue 2");

    /* compiled with an in-memory header, then linked */
    const char *header_text = "#define W0 1.5f\n";
    cl_program header = clCreateProgramWithSource(ctx1, 1, &header_text, NULL, &err);
    CHECK(err, "header program");
    const char *header_name = "weights.h";
    cl_program kernel_part = from_source(ctx1, "kernel.cl");
    CHECK(clCompileProgram(kernel_part, 1, &device, NULL, 1, &header, &header_name, NULL, NULL),
          "clCompileProgram kernel");
    cl_program lib_part = from_source(ctx1, "lib.cl");
    CHECK(clCompileProgram(lib_part, 1, &device, NULL, 0, NULL, NULL, NULL, NULL), "clCompileProgram lib");
    cl_program parts[2] = {kernel_part, lib_part};
    cl_program linked = clLinkProgram(ctx1, 1, &device, NULL, 2, parts, NULL, NULL, &err);
    CHECK(err, "clLinkProgram");
    cl_kernel weighted = clCreateKernel(linked, "weighted", &err);
    CHECK(err, "clCreateKernel weighted");

    /* built from source on the first context, from its binary on the second */
    cl_program scale1 = from_source(ctx1, "scale.cl");
    CHECK(clBuildProgram(scale1, 1, &device, NULL, NULL, NULL), "clBuildProgram scale");
    size_t bin_size;
    CHECK(clGetProgramInfo(scale1, CL_PROGRAM_BINARY_SIZES, sizeof bin_size, &bin_size, NULL), "binary size");
    unsigned char *bin = malloc(bin_size);
    CHECK(clGetProgramInfo(scale1, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL), "binary");
    cl_int status;
    cl_program scale2 = clCreateProgramWithBinary(ctx2, 1, &device, &bin_size, (const unsigned char **)&bin,
                                                  &status, &err);
    CHECK(err, "clCreateProgramWithBinary");
    CHECK(status, "binary status");
    CHECK(clBuildProgram(scale2, 1, &device, NULL, NULL, NULL), "clBuildProgram from binary");
    cl_kernel scale_src = clCreateKernel(scale1, "scale", &err);
    CHECK(err, "clCreateKernel scale 1");
    cl_kernel scale_bin = clCreateKernel(scale2, "scale", &err);
    CHECK(err, "clCreateKernel scale 2");

    cl_mem d_x = clCreateBuffer(ctx1, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, x, &err);
    CHECK(err, "clCreateBuffer x");
    cl_mem d_y1 = clCreateBuffer(ctx1, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK(err, "clCreateBuffer y1");
    cl_mem d_y2 = clCreateBuffer(ctx2, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK(err, "clCreateBuffer y2");

    size_t local = 50, global = ((size_t)n + 49) / 50 * 50;
    float s1 = 0.5f, s2 = -3.0f;
    CHECK(clSetKernelArg(weighted, 0, sizeof(cl_mem), &d_x), "w arg 0");
    CHECK(clSetKernelArg(weighted, 1, sizeof(cl_mem), &d_y1), "w arg 1");
    CHECK(clSetKernelArg(weighted, 2, sizeof(int), &n), "w arg 2");
    CHECK(clSetKernelArg(scale_src, 0, sizeof(cl_mem), &d_y1), "s1 arg 0");
    CHECK(clSetKernelArg(scale_src, 1, sizeof(float), &s1), "s1 arg 1");
    CHECK(clSetKernelArg(scale_src, 2, sizeof(int), &n), "s1 arg 2");
    CHECK(clSetKernelArg(scale_bin, 0, sizeof(cl_mem), &d_y2), "s2 arg 0");
    CHECK(clSetKernelArg(scale_bin, 1, sizeof(float), &s2), "s2 arg 1");
    CHECK(clSetKernelArg(scale_bin, 2, sizeof(int), &n), "s2 arg 2");

    int mismatches = 0;
    double sum = 0.0;
    for (int r = 0; r < rounds; r++) {
        CHECK(clEnqueueNDRangeKernel(q1, weighted, 1, NULL, &global, &local, 0, NULL, NULL), "weighted");
        CHECK(clEnqueueNDRangeKernel(q1, scale_src, 1, NULL, &global, &local, 0, NULL, NULL), "scale 1");
        /* to the second context through the host */
        CHECK(clEnqueueReadBuffer(q1, d_y1, CL_TRUE, 0, bytes, y, 0, NULL, NULL), "read y1");
        CHECK(clEnqueueWriteBuffer(q2, d_y2, CL_TRUE, 0, bytes, y, 0, NULL, NULL), "write y2");
        CHECK(clEnqueueNDRangeKernel(q2, scale_bin, 1, NULL, &global, &local, 0, NULL, NULL), "scale 2");
        CHECK(clEnqueueReadBuffer(q2, d_y2, CL_TRUE, 0, bytes, y, 0, NULL, NULL), "read y2");
        for (int i = 0; i < n; i++) {
            ref[i] = ((x[i] * (float)(i % 7) * 0.125f) + 1.5f) * s1 * s2;
            mismatches += differs(y[i], ref[i]);
            sum += y[i];
        }
    }
    printf("linked_binary n=%d rounds=%d sum %.6f: %d mismatches\n", n, rounds, sum, mismatches);

    clReleaseKernel(weighted); clReleaseKernel(scale_src); clReleaseKernel(scale_bin);
    clReleaseProgram(header); clReleaseProgram(kernel_part); clReleaseProgram(lib_part);
    clReleaseProgram(linked); clReleaseProgram(scale1); clReleaseProgram(scale2);
    clReleaseMemObject(d_x); clReleaseMemObject(d_y1); clReleaseMemObject(d_y2);
    clReleaseCommandQueue(q1); clReleaseCommandQueue(q2);
    clReleaseContext(ctx1); clReleaseContext(ctx2);
    free(x); free(y); free(ref); free(bin);
    return mismatches ? 1 : 0;
}

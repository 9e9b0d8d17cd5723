/* Kernel objects made the less common ways: every kernel of a program at
   once (clCreateKernelsInProgram, found by name), one cloned with its
   arguments (clCloneKernel) and given others; a 3-D NDRange with a global
   offset; a buffer the host never touches (CL_MEM_HOST_NO_ACCESS), which
   the clone updates and a copy reads: ./kernel_objects NX NY NZ ROUNDS. */
#undef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
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

int main(int argc, char **argv)
{
    int nx = argc > 1 ? atoi(argv[1]) : 34;
    int ny = argc > 2 ? atoi(argv[2]) : 18;
    int nz = argc > 3 ? atoi(argv[3]) : 10;
    int rounds = argc > 4 ? atoi(argv[4]) : 4;
    int n = nx * ny * nz;
    size_t bytes = sizeof(float) * (size_t)n;
    float *out = calloc(n, sizeof(float)), *out2 = calloc(n, sizeof(float));
    float *g = calloc(n, sizeof(float)), *ref = calloc(n, sizeof(float)), *ref2 = calloc(n, sizeof(float));

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err, "clCreateCommandQueue");

    size_t len;
    char *source = read_file("kernel.cl", &len);
    cl_program program = clCreateProgramWithSource(context, 1, (const char **)&source, &len, &err);
    CHECK(err, "clCreateProgramWithSource");
    free(source);
    CHECK(clBuildProgram(program, 1, &device, NULL, NULL, NULL), "clBuildProgram");

    cl_kernel all[2], fill = NULL, axpy = NULL;
    cl_uint count = 0;
    CHECK(clCreateKernelsInProgram(program, 2, all, &count), "clCreateKernelsInProgram");
    for (cl_uint k = 0; k < count; k++) {
        char name[64];
        CHECK(clGetKernelInfo(all[k], CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL), "name");
        if (!strcmp(name, "fill3d")) fill = all[k];
        if (!strcmp(name, "axpy_from")) axpy = all[k];
    }
    if (!fill || !axpy) { fprintf(stderr, "kernels missing\n"); return 2; }

    cl_mem d_g = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK(err, "clCreateBuffer g");
    cl_mem d_tmp = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS, bytes, NULL, &err);
    CHECK(err, "clCreateBuffer tmp");
    cl_mem d_out = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, out, &err);
    CHECK(err, "clCreateBuffer out");
    cl_mem d_out2 = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, out2, &err);
    CHECK(err, "clCreateBuffer out2");
    float zero = 0.0f;
    CHECK(clEnqueueFillBuffer(queue, d_g, &zero, sizeof zero, 0, bytes, 0, NULL, NULL), "fill g");
    CHECK(clEnqueueFillBuffer(queue, d_tmp, &zero, sizeof zero, 0, bytes, 0, NULL, NULL), "fill tmp");

    CHECK(clSetKernelArg(fill, 0, sizeof(cl_mem), &d_g), "fill arg 0");
    CHECK(clSetKernelArg(fill, 1, sizeof(int), &nx), "fill arg 1");
    CHECK(clSetKernelArg(fill, 2, sizeof(int), &ny), "fill arg 2");
    size_t offset[3] = {1, 1, 1};
    size_t global[3] = {(size_t)nx - 2, (size_t)ny - 2, (size_t)nz - 2};
    size_t local[3] = {16, 4, 2};
    CHECK(clEnqueueNDRangeKernel(queue, fill, 3, offset, global, local, 0, NULL, NULL), "fill3d");
    for (int z = 1; z < nz - 1; z++)
        for (int y = 1; y < ny - 1; y++)
            for (int x = 1; x < nx - 1; x++)
                g[(z * ny + y) * nx + x] = 0.25f * (float)x - 0.5f * (float)y + (float)z;

    float a = 0.5f, b = -2.0f;
    CHECK(clSetKernelArg(axpy, 0, sizeof(cl_mem), &d_g), "axpy arg 0");
    CHECK(clSetKernelArg(axpy, 1, sizeof(cl_mem), &d_out), "axpy arg 1");
    CHECK(clSetKernelArg(axpy, 2, sizeof(float), &a), "axpy arg 2");
    CHECK(clSetKernelArg(axpy, 3, sizeof(int), &n), "axpy arg 3");
    /* the clone keeps src and n, and gets its own dst and factor */
    cl_kernel clone = clCloneKernel(axpy, &err);
    CHECK(err, "clCloneKernel");
    CHECK(clSetKernelArg(clone, 1, sizeof(cl_mem), &d_tmp), "clone arg 1");
    CHECK(clSetKernelArg(clone, 2, sizeof(float), &b), "clone arg 2");

    size_t l1 = 64, g1 = ((size_t)n + 63) / 64 * 64;
    for (int r = 0; r < rounds; r++) {
        CHECK(clEnqueueNDRangeKernel(queue, axpy, 1, NULL, &g1, &l1, 0, NULL, NULL), "axpy");
        CHECK(clEnqueueNDRangeKernel(queue, clone, 1, NULL, &g1, &l1, 0, NULL, NULL), "clone");
        for (int i = 0; i < n; i++) {
            ref[i] = a * g[i] + ref[i];
            ref2[i] = b * g[i] + ref2[i];
        }
    }
    CHECK(clEnqueueCopyBuffer(queue, d_tmp, d_out2, 0, 0, bytes, 0, NULL, NULL), "copy tmp");
    CHECK(clFinish(queue), "clFinish");
    CHECK(clEnqueueReadBuffer(queue, d_out, CL_TRUE, 0, bytes, out, 0, NULL, NULL), "read out");
    CHECK(clEnqueueReadBuffer(queue, d_out2, CL_TRUE, 0, bytes, out2, 0, NULL, NULL), "read out2");
    int mismatches = 0;
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        mismatches += differs(out[i], ref[i]) + differs(out2[i], ref2[i]);
        sum += (double)out[i] - (double)out2[i];
    }
    printf("kernel_objects %dx%dx%d rounds=%d sum %.6f: %d mismatches\n", nx, ny, nz, rounds, sum, mismatches);

    clReleaseKernel(clone);
    for (cl_uint k = 0; k < count; k++)
        clReleaseKernel(all[k]);
    clReleaseProgram(program);
    clReleaseMemObject(d_g);
    clReleaseMemObject(d_tmp);
    clReleaseMemObject(d_out);
    clReleaseMemObject(d_out2);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(out); free(out2); free(g); free(ref); free(ref2);
    return mismatches ? 1 : 0;
}

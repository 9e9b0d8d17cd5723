/* Two kernels chained by event wait lists on a profiling queue, with
   non-blocking transfers: ./events N. */
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

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4096;
    float a = 2.0f;
    size_t bytes = sizeof(float) * n;
    float *x = malloc(bytes), *y = malloc(bytes), *z = malloc(bytes);
    for (int i = 0; i < n; i++) {
        x[i] = (float)(i % 31) * 0.25f;
        y[i] = (float)(i % 7) - 2.0f;
    }

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE, &err);
    CHECK(err, "clCreateCommandQueue");

    cl_mem d_x = clCreateBuffer(context, CL_MEM_READ_ONLY, bytes, NULL, &err);
    CHECK(err, "clCreateBuffer x");
    cl_mem d_y = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK(err, "clCreateBuffer y");
    cl_mem d_z = clCreateBuffer(context, CL_MEM_WRITE_ONLY, bytes, NULL, &err);
    CHECK(err, "clCreateBuffer z");

    cl_program program = build(context, device, "kernel.cl", NULL);
    cl_kernel k_saxpy = clCreateKernel(program, "saxpy", &err);
    CHECK(err, "clCreateKernel saxpy");
    cl_kernel k_square = clCreateKernel(program, "square", &err);
    CHECK(err, "clCreateKernel square");
    CHECK(clSetKernelArg(k_saxpy, 0, sizeof(cl_mem), &d_x), "arg 0");
    CHECK(clSetKernelArg(k_saxpy, 1, sizeof(cl_mem), &d_y), "arg 1");
    CHECK(clSetKernelArg(k_saxpy, 2, sizeof(float), &a), "arg 2");
    CHECK(clSetKernelArg(k_saxpy, 3, sizeof(int), &n), "arg 3");
    CHECK(clSetKernelArg(k_square, 0, sizeof(cl_mem), &d_y), "arg 0");
    CHECK(clSetKernelArg(k_square, 1, sizeof(cl_mem), &d_z), "arg 1");
    CHECK(clSetKernelArg(k_square, 2, sizeof(int), &n), "arg 2");

    cl_event written[2], ran[2], read;
    CHECK(clEnqueueWriteBuffer(queue, d_x, CL_FALSE, 0, bytes, x, 0, NULL, &written[0]), "write x");
    CHECK(clEnqueueWriteBuffer(queue, d_y, CL_FALSE, 0, bytes, y, 0, NULL, &written[1]), "write y");
    size_t local = 128;
    size_t global = ((size_t)n + 127) / 128 * 128;
    CHECK(clEnqueueNDRangeKernel(queue, k_saxpy, 1, NULL, &global, &local, 2, written, &ran[0]), "launch saxpy");
    CHECK(clEnqueueNDRangeKernel(queue, k_square, 1, NULL, &global, &local, 1, &ran[0], &ran[1]), "launch square");
    CHECK(clEnqueueReadBuffer(queue, d_z, CL_FALSE, 0, bytes, z, 1, &ran[1], &read), "read z");
    CHECK(clWaitForEvents(1, &read), "clWaitForEvents");

    for (int k = 0; k < 2; k++) {
        cl_int status;
        CHECK(clGetEventInfo(ran[k], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL), "clGetEventInfo");
        cl_command_type type;
        CHECK(clGetEventInfo(ran[k], CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL), "clGetEventInfo type");
        cl_ulong queued, start, end;
        CHECK(clGetEventProfilingInfo(ran[k], CL_PROFILING_COMMAND_QUEUED, sizeof queued, &queued, NULL), "profiling queued");
        CHECK(clGetEventProfilingInfo(ran[k], CL_PROFILING_COMMAND_START, sizeof start, &start, NULL), "profiling start");
        CHECK(clGetEventProfilingInfo(ran[k], CL_PROFILING_COMMAND_END, sizeof end, &end, NULL), "profiling end");
        /* a kernel launch takes time, and says it is one */
        if (status != CL_COMPLETE || type != CL_COMMAND_NDRANGE_KERNEL || queued > start || end <= start) {
            fprintf(stderr, "kernel %d: status %d, type %#x, queued %llu, start %llu, end %llu\n", k,
                    (int)status, (unsigned)type, (unsigned long long)queued,
                    (unsigned long long)start, (unsigned long long)end);
            return 1;
        }
        printf("kernel %d: %.3f ms\n", k, (double)(end - start) * 1e-6);
    }

    int mismatches = 0;
    for (int i = 0; i < n; i++) {
        float yy = a * x[i] + y[i];
        if (differs(z[i], yy * yy))
            mismatches++;
    }
    printf("events n=%d: %d mismatches\n", n, mismatches);

    for (int k = 0; k < 2; k++) {
        clReleaseEvent(written[k]);
        clReleaseEvent(ran[k]);
    }
    clReleaseEvent(read);
    clReleaseKernel(k_saxpy);
    clReleaseKernel(k_square);
    clReleaseProgram(program);
    clReleaseMemObject(d_x);
    clReleaseMemObject(d_y);
    clReleaseMemObject(d_z);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(x); free(y); free(z);
    return mismatches ? 1 : 0;
}

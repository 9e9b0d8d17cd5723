/* A ring filled through an index array twice, with writes the analysis
   cannot bound: once every writer of a slot writes the same value (the
   devices' copies merge), once two writers write different values (the
   run-time check finds the conflict and the launch runs unsplit):
   ./scatter N (N a multiple of 128). */
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


int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4096;
    int m = n / 2;
    int *idx = malloc(sizeof(int) * n);
    float *in = malloc(sizeof(float) * n);
    float *table = malloc(sizeof(float) * m);
    float *ring = malloc(sizeof(float) * m);
    for (int i = 0; i < n; i++) {
        idx[i] = i;
        in[i] = (float)((i * 37) % 1000) * 0.25f;
    }
    for (int k = 0; k < m; k++) {
        table[k] = (float)k * 0.5f + 3.0f;
        ring[k] = -1.0f;
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
    cl_mem d_idx = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(int) * n, idx, &err);
    CHECK(err, "clCreateBuffer idx");
    cl_mem d_in = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(float) * n, in, &err);
    CHECK(err, "clCreateBuffer in");
    cl_mem d_table = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(float) * m, table, &err);
    CHECK(err, "clCreateBuffer table");
    cl_mem d_ring = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(float) * m, ring, &err);
    CHECK(err, "clCreateBuffer ring");

    cl_program program = build(context, device, "kernel.cl", NULL);
    cl_kernel same = clCreateKernel(program, "ring_same", &err);
    CHECK(err, "clCreateKernel ring_same");
    cl_kernel over = clCreateKernel(program, "ring_overwrite", &err);
    CHECK(err, "clCreateKernel ring_overwrite");
    CHECK(clSetKernelArg(same, 0, sizeof(cl_mem), &d_idx), "arg");
    CHECK(clSetKernelArg(same, 1, sizeof(cl_mem), &d_table), "arg");
    CHECK(clSetKernelArg(same, 2, sizeof(cl_mem), &d_ring), "arg");
    CHECK(clSetKernelArg(same, 3, sizeof(int), &m), "arg");
    CHECK(clSetKernelArg(same, 4, sizeof(int), &n), "arg");
    CHECK(clSetKernelArg(over, 0, sizeof(cl_mem), &d_in), "arg");
    CHECK(clSetKernelArg(over, 1, sizeof(cl_mem), &d_idx), "arg");
    CHECK(clSetKernelArg(over, 2, sizeof(cl_mem), &d_ring), "arg");
    CHECK(clSetKernelArg(over, 3, sizeof(int), &m), "arg");
    CHECK(clSetKernelArg(over, 4, sizeof(int), &n), "arg");

    size_t local = 64;
    size_t global = ((size_t)n + 63) / 64 * 64;
    int mismatches = 0;
    /* the same value from every writer: the table */
    CHECK(clEnqueueNDRangeKernel(queue, same, 1, NULL, &global, &local, 0, NULL, NULL), "launch");
    CHECK(clEnqueueReadBuffer(queue, d_ring, CL_TRUE, 0, sizeof(float) * m, ring, 0, NULL, NULL), "read ring");
    for (int k = 0; k < m; k++)
        mismatches += ring[k] != table[k];
    /* two writers of each slot: one of their values (OpenCL leaves which
       to the order of the work-groups) */
    CHECK(clEnqueueNDRangeKernel(queue, over, 1, NULL, &global, &local, 0, NULL, NULL), "launch");
    CHECK(clEnqueueReadBuffer(queue, d_ring, CL_TRUE, 0, sizeof(float) * m, ring, 0, NULL, NULL), "read ring");
    for (int k = 0; k < m; k++)
        mismatches += ring[k] != in[k] && ring[k] != in[k + m];
    printf("scatter n=%d: %d mismatches\n", n, mismatches);

    clReleaseKernel(same);
    clReleaseKernel(over);
    clReleaseProgram(program);
    clReleaseMemObject(d_idx);
    clReleaseMemObject(d_in);
    clReleaseMemObject(d_table);
    clReleaseMemObject(d_ring);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(idx);
    free(in);
    free(table);
    free(ring);
    return mismatches ? 1 : 0;
}

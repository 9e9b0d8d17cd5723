/* Transient thermal simulation of a chip on a GRID x GRID grid, written
   the way the heterogeneous benchmark hosts write it: STEPS time steps in
   launches of a pyramid of PYRAMID steps each, 16 x 16 work-groups whose
   tiles overlap by PYRAMID cells of halo, the two temperature buffers
   swapped between launches, the kernel built with -DBLOCK_SIZE=16. The
   chip's constants are the suites' (0.016 m square, 0.5 mm thick);
   temperatures and powers come from a fixed LCG seed. The host steps the
   whole grid itself, one step at a time, and compares every cell within
   a relative 1e-5 (the device may contract or round the float expression
   differently); the line also carries a checksum of the result's bits.
   ./hotspot [GRID PYRAMID STEPS] */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include <CL/cl.h>

#define CHECK(err, what) do { if ((err) != CL_SUCCESS) { \
    fprintf(stderr, "%s failed: %d\n", what, (int)(err)); exit(2); } } while (0)
#define BLOCK_SIZE 16
#define EXPAND_RATE 2
#define MIN(a, b) ((a) <= (b) ? (a) : (b))

/* chip parameters, as in the suites */
#define MAX_PD 3.0e6
#define PRECISION 0.001
#define SPEC_HEAT_SI 1.75e6
#define K_SI 100
#define FACTOR_CHIP 0.5
#define AMB_TEMP 80.0f
static const double t_chip = 0.0005, chip_height = 0.016, chip_width = 0.016;

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

static unsigned seed = 4099u;

static unsigned lcg(void)
{
    seed = seed * 1103515245u + 12345u;
    return (seed >> 16) & 0x7fff;
}

/* The CPU reference: one step over the whole grid, neighbours beyond the
   edge clamped to the cell, the kernel's expression in the kernel's order. */
static void step_grid(const float *power, const float *src, float *dst, int rows, int cols,
                      float step_div_Cap, float Rx_1, float Ry_1, float Rz_1)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            int n = r > 0 ? r - 1 : r, s = r < rows - 1 ? r + 1 : r;
            int w = c > 0 ? c - 1 : c, e = c < cols - 1 ? c + 1 : c;
            float t = src[r * cols + c];
            dst[r * cols + c] = t + step_div_Cap * (power[r * cols + c] +
                (src[s * cols + c] + src[n * cols + c] - 2.0f * t) * Ry_1 +
                (src[r * cols + e] + src[r * cols + w] - 2.0f * t) * Rx_1 +
                (AMB_TEMP - t) * Rz_1);
        }
}

int main(int argc, char **argv)
{
    int grid_rows = argc > 1 ? atoi(argv[1]) : 512;
    int pyramid_height = argc > 2 ? atoi(argv[2]) : 2;
    int total_iterations = argc > 3 ? atoi(argv[3]) : 40;
    int grid_cols = grid_rows;
    if (grid_rows <= 0 || pyramid_height <= 0 || 2 * pyramid_height >= BLOCK_SIZE ||
        total_iterations <= 0 || total_iterations % pyramid_height) {
        fprintf(stderr, "need GRID > 0, 0 < 2 * PYRAMID < %d, STEPS a multiple of PYRAMID\n", BLOCK_SIZE);
        return 2;
    }
    size_t size = (size_t)grid_rows * grid_cols;
    float *temp = malloc(sizeof(float) * size), *power = malloc(sizeof(float) * size);
    float *out = malloc(sizeof(float) * size);
    for (size_t i = 0; i < size; i++) {
        temp[i] = 323.0f + (float)(lcg() % 2000) / 100.0f;
        power[i] = (float)(lcg() % 1000) * 1.0e-6f;
    }

    float grid_height = chip_height / grid_rows;
    float grid_width = chip_width / grid_cols;
    float Cap = FACTOR_CHIP * SPEC_HEAT_SI * t_chip * grid_width * grid_height;
    float Rx = grid_width / (2.0 * K_SI * t_chip * grid_height);
    float Ry = grid_height / (2.0 * K_SI * t_chip * grid_width);
    float Rz = t_chip / (K_SI * grid_height * grid_width);
    float max_slope = MAX_PD / (FACTOR_CHIP * t_chip * SPEC_HEAT_SI);
    float step = PRECISION / max_slope;

    int smallBlockCol = BLOCK_SIZE - pyramid_height * EXPAND_RATE;
    int smallBlockRow = BLOCK_SIZE - pyramid_height * EXPAND_RATE;
    int blockCols = grid_cols / smallBlockCol + ((grid_cols % smallBlockCol == 0) ? 0 : 1);
    int blockRows = grid_rows / smallBlockRow + ((grid_rows % smallBlockRow == 0) ? 0 : 1);
    int borderCols = pyramid_height * EXPAND_RATE / 2;
    int borderRows = pyramid_height * EXPAND_RATE / 2;

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err, "clCreateCommandQueue");

    cl_mem MatrixTemp[2];
    MatrixTemp[0] = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                   sizeof(float) * size, temp, &err);
    CHECK(err, "clCreateBuffer temperature 0");
    MatrixTemp[1] = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(float) * size, NULL, &err);
    CHECK(err, "clCreateBuffer temperature 1");
    cl_mem MatrixPower = clCreateBuffer(context, CL_MEM_READ_ONLY, sizeof(float) * size, NULL, &err);
    CHECK(err, "clCreateBuffer power");
    CHECK(clEnqueueWriteBuffer(queue, MatrixPower, CL_TRUE, 0, sizeof(float) * size, power, 0, NULL, NULL), "write power");

    size_t len;
    char *source = read_file("kernel.cl", &len);
    cl_program program = clCreateProgramWithSource(context, 1, (const char **)&source, &len, &err);
    CHECK(err, "clCreateProgramWithSource");
    free(source);
    char options[64];
    snprintf(options, sizeof options, "-DBLOCK_SIZE=%d", BLOCK_SIZE);
    err = clBuildProgram(program, 1, &device, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[8192];
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build failed:\n%s\n", log);
        exit(2);
    }
    cl_kernel kernel = clCreateKernel(program, "hotspot", &err);
    CHECK(err, "clCreateKernel");
    CHECK(clSetKernelArg(kernel, 1, sizeof(cl_mem), &MatrixPower), "arg 1");
    CHECK(clSetKernelArg(kernel, 4, sizeof(int), &grid_cols), "arg 4");
    CHECK(clSetKernelArg(kernel, 5, sizeof(int), &grid_rows), "arg 5");
    CHECK(clSetKernelArg(kernel, 6, sizeof(int), &borderCols), "arg 6");
    CHECK(clSetKernelArg(kernel, 7, sizeof(int), &borderRows), "arg 7");
    CHECK(clSetKernelArg(kernel, 8, sizeof(float), &Cap), "arg 8");
    CHECK(clSetKernelArg(kernel, 9, sizeof(float), &Rx), "arg 9");
    CHECK(clSetKernelArg(kernel, 10, sizeof(float), &Ry), "arg 10");
    CHECK(clSetKernelArg(kernel, 11, sizeof(float), &Rz), "arg 11");
    CHECK(clSetKernelArg(kernel, 12, sizeof(float), &step), "arg 12");

    size_t global[2] = {(size_t)BLOCK_SIZE * blockCols, (size_t)BLOCK_SIZE * blockRows};
    size_t local[2] = {BLOCK_SIZE, BLOCK_SIZE};
    int src = 0, dst = 1, launches = 0;
    double t0 = now_ms();
    for (int t = 0; t < total_iterations; t += pyramid_height) {
        int iter = MIN(pyramid_height, total_iterations - t);
        CHECK(clSetKernelArg(kernel, 0, sizeof(int), &iter), "arg 0");
        CHECK(clSetKernelArg(kernel, 2, sizeof(cl_mem), &MatrixTemp[src]), "arg 2");
        CHECK(clSetKernelArg(kernel, 3, sizeof(cl_mem), &MatrixTemp[dst]), "arg 3");
        CHECK(clEnqueueNDRangeKernel(queue, kernel, 2, NULL, global, local, 0, NULL, NULL), "launch");
        launches++;
        int swap = src; src = dst; dst = swap;
    }
    CHECK(clFinish(queue), "clFinish");
    fprintf(stderr, "device section: %.1f ms\n", now_ms() - t0);
    CHECK(clEnqueueReadBuffer(queue, MatrixTemp[src], CL_TRUE, 0, sizeof(float) * size, out, 0, NULL, NULL), "read");

    float step_div_Cap = step / Cap;
    float Rx_1 = 1.0f / Rx, Ry_1 = 1.0f / Ry, Rz_1 = 1.0f / Rz;
    float *a = malloc(sizeof(float) * size), *b = malloc(sizeof(float) * size);
    memcpy(a, temp, sizeof(float) * size);
    for (int t = 0; t < total_iterations; t++) {
        step_grid(power, a, b, grid_rows, grid_cols, step_div_Cap, Rx_1, Ry_1, Rz_1);
        float *swap = a; a = b; b = swap;
    }
    int mismatches = 0, differing_bits = 0;
    unsigned checksum = 0;
    for (size_t i = 0; i < size; i++) {
        if (!(fabsf(out[i] - a[i]) <= 1e-5f * fabsf(a[i])))
            mismatches++;
        unsigned bits, ref_bits;
        memcpy(&bits, &out[i], sizeof bits);
        memcpy(&ref_bits, &a[i], sizeof ref_bits);
        differing_bits += bits != ref_bits;
        checksum = checksum * 31u + bits;
    }
    printf("hotspot %dx%d pyramid=%d steps=%d launches=%d checksum %08x (%d cells not bit-equal): %d mismatches\n",
           grid_rows, grid_cols, pyramid_height, total_iterations, launches, checksum, differing_bits,
           mismatches);

    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseMemObject(MatrixTemp[0]);
    clReleaseMemObject(MatrixTemp[1]);
    clReleaseMemObject(MatrixPower);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(temp); free(power); free(out); free(a); free(b);
    return mismatches != 0;
}

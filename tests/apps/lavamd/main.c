/* Particle interactions in a BOXES1D^3 grid of boxes of 100 particles,
   written the way the heterogeneous benchmark hosts write it: the boxes
   with their neighbour lists (an array member of the box struct), the
   particles' positions and charges copied in at buffer creation, the
   parameters passed by value as structs, one launch of one 128-wide
   work-group per box, the kernel built with -I. for the shared header.
   Positions and charges come from a fixed LCG seed. The host computes
   every particle's potential and force itself in the kernel's order and
   compares within a relative 1e-4 (the device's exp and contractions may
   round differently); the line also carries a checksum of fv's bits.
   ./lavamd [BOXES1D] */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include <CL/cl.h>
#include "lavamd.h"

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

static unsigned seed = 2u;

static unsigned lcg(void)
{
    seed = seed * 1103515245u + 12345u;
    return (seed >> 16) & 0x7fff;
}

/* The CPU reference: per home box and particle, the home box then each
   neighbour, every particle of it, in the kernel's order of operations. */
static void reference(const box_str *box, const FOUR_VECTOR *rv, const fp *qv, FOUR_VECTOR *fv,
                      long number_boxes, fp alpha)
{
    fp a2 = 2 * alpha * alpha;
    for (long bx = 0; bx < number_boxes; bx++) {
        long first_i = box[bx].offset;
        for (int i = 0; i < NUMBER_PAR_PER_BOX; i++) {
            FOUR_VECTOR a = rv[first_i + i];
            for (int k = 0; k < 1 + box[bx].nn; k++) {
                int pointer = k == 0 ? (int)bx : box[bx].nei[k - 1].number;
                long first_j = box[pointer].offset;
                for (int j = 0; j < NUMBER_PAR_PER_BOX; j++) {
                    FOUR_VECTOR b = rv[first_j + j];
                    fp r2 = a.v + b.v - DOT(a, b);
                    fp u2 = a2 * r2;
                    fp vij = expf(-u2);
                    fp fs = 2 * vij;
                    THREE_VECTOR d;
                    d.x = a.x - b.x;
                    d.y = a.y - b.y;
                    d.z = a.z - b.z;
                    fv[first_i + i].v += qv[first_j + j] * vij;
                    fv[first_i + i].x += qv[first_j + j] * (fs * d.x);
                    fv[first_i + i].y += qv[first_j + j] * (fs * d.y);
                    fv[first_i + i].z += qv[first_j + j] * (fs * d.z);
                }
            }
        }
    }
}

static int close_enough(fp got, fp want)
{
    return fabsf(got - want) <= 1e-4f * (fabsf(want) + 1.0f);
}

int main(int argc, char **argv)
{
    par_str par_cpu;
    dim_str dim_cpu;
    dim_cpu.boxes1d_arg = argc > 1 ? atoi(argv[1]) : 4;
    if (dim_cpu.boxes1d_arg <= 0) { fprintf(stderr, "need BOXES1D > 0\n"); return 2; }
    par_cpu.alpha = 0.5f;
    int b1d = dim_cpu.boxes1d_arg;
    dim_cpu.number_boxes = (long)b1d * b1d * b1d;
    dim_cpu.space_elem = dim_cpu.number_boxes * NUMBER_PAR_PER_BOX;
    size_t box_mem = sizeof(box_str) * dim_cpu.number_boxes;
    size_t space_mem = sizeof(FOUR_VECTOR) * dim_cpu.space_elem;
    size_t space_mem2 = sizeof(fp) * dim_cpu.space_elem;

    /* boxes, numbered z-major, and their in-grid neighbours */
    box_str *box_cpu = malloc(box_mem);
    int nh = 0;
    for (int i = 0; i < b1d; i++)
        for (int j = 0; j < b1d; j++)
            for (int k = 0; k < b1d; k++) {
                box_str *b = &box_cpu[nh];
                b->x = k;
                b->y = j;
                b->z = i;
                b->number = nh;
                b->offset = (long)nh * NUMBER_PAR_PER_BOX;
                b->nn = 0;
                for (int l = -1; l < 2; l++)
                    for (int m = -1; m < 2; m++)
                        for (int n = -1; n < 2; n++) {
                            if (i + l < 0 || j + m < 0 || k + n < 0 ||
                                i + l >= b1d || j + m >= b1d || k + n >= b1d ||
                                (l == 0 && m == 0 && n == 0))
                                continue;
                            nei_str *e = &b->nei[b->nn];
                            e->x = k + n;
                            e->y = j + m;
                            e->z = i + l;
                            e->number = e->z * b1d * b1d + e->y * b1d + e->x;
                            e->offset = (long)e->number * NUMBER_PAR_PER_BOX;
                            b->nn++;
                        }
                nh++;
            }

    FOUR_VECTOR *rv_cpu = malloc(space_mem), *fv_cpu = calloc(dim_cpu.space_elem, sizeof(FOUR_VECTOR));
    FOUR_VECTOR *ref = calloc(dim_cpu.space_elem, sizeof(FOUR_VECTOR));
    fp *qv_cpu = malloc(space_mem2);
    for (long i = 0; i < dim_cpu.space_elem; i++) {
        rv_cpu[i].v = (fp)(lcg() % 10 + 1) / 10.0f;
        rv_cpu[i].x = (fp)(lcg() % 10 + 1) / 10.0f;
        rv_cpu[i].y = (fp)(lcg() % 10 + 1) / 10.0f;
        rv_cpu[i].z = (fp)(lcg() % 10 + 1) / 10.0f;
    }
    for (long i = 0; i < dim_cpu.space_elem; i++)
        qv_cpu[i] = (fp)(lcg() % 10 + 1) / 10.0f;

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err, "clCreateCommandQueue");

    cl_mem d_box_gpu = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, box_mem, box_cpu, &err);
    CHECK(err, "clCreateBuffer boxes");
    cl_mem d_rv_gpu = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, space_mem, rv_cpu, &err);
    CHECK(err, "clCreateBuffer rv");
    cl_mem d_qv_gpu = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, space_mem2, qv_cpu, &err);
    CHECK(err, "clCreateBuffer qv");
    cl_mem d_fv_gpu = clCreateBuffer(context, CL_MEM_READ_WRITE, space_mem, NULL, &err);
    CHECK(err, "clCreateBuffer fv");
    CHECK(clEnqueueWriteBuffer(queue, d_fv_gpu, CL_TRUE, 0, space_mem, fv_cpu, 0, NULL, NULL), "write fv");

    size_t len;
    char *source = read_file("kernel.cl", &len);
    cl_program program = clCreateProgramWithSource(context, 1, (const char **)&source, &len, &err);
    CHECK(err, "clCreateProgramWithSource");
    free(source);
    err = clBuildProgram(program, 1, &device, "-I.", NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[8192];
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build failed:\n%s\n", log);
        exit(2);
    }
    cl_kernel kernel = clCreateKernel(program, "kernel_gpu_opencl", &err);
    CHECK(err, "clCreateKernel");
    CHECK(clSetKernelArg(kernel, 0, sizeof(par_str), &par_cpu), "arg 0");
    CHECK(clSetKernelArg(kernel, 1, sizeof(dim_str), &dim_cpu), "arg 1");
    CHECK(clSetKernelArg(kernel, 2, sizeof(cl_mem), &d_box_gpu), "arg 2");
    CHECK(clSetKernelArg(kernel, 3, sizeof(cl_mem), &d_rv_gpu), "arg 3");
    CHECK(clSetKernelArg(kernel, 4, sizeof(cl_mem), &d_qv_gpu), "arg 4");
    CHECK(clSetKernelArg(kernel, 5, sizeof(cl_mem), &d_fv_gpu), "arg 5");

    size_t local = NUMBER_THREADS;
    size_t global = (size_t)dim_cpu.number_boxes * local;
    double t0 = now_ms();
    CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL), "launch");
    CHECK(clFinish(queue), "clFinish");
    fprintf(stderr, "device section: %.1f ms\n", now_ms() - t0);
    CHECK(clEnqueueReadBuffer(queue, d_fv_gpu, CL_TRUE, 0, space_mem, fv_cpu, 0, NULL, NULL), "read fv");

    reference(box_cpu, rv_cpu, qv_cpu, ref, dim_cpu.number_boxes, par_cpu.alpha);
    int mismatches = 0;
    unsigned checksum = 0;
    for (long i = 0; i < dim_cpu.space_elem; i++) {
        if (!close_enough(fv_cpu[i].v, ref[i].v) || !close_enough(fv_cpu[i].x, ref[i].x) ||
            !close_enough(fv_cpu[i].y, ref[i].y) || !close_enough(fv_cpu[i].z, ref[i].z))
            mismatches++;
        unsigned bits[4];
        memcpy(bits, &fv_cpu[i], sizeof bits);
        for (int c = 0; c < 4; c++)
            checksum = checksum * 31u + bits[c];
    }
    printf("lavamd boxes=%ldx%d particles=%ld v[0]=%.4f checksum %08x: %d mismatches\n",
           dim_cpu.number_boxes, NUMBER_PAR_PER_BOX, dim_cpu.space_elem, fv_cpu[0].v, checksum,
           mismatches);

    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseMemObject(d_box_gpu);
    clReleaseMemObject(d_rv_gpu);
    clReleaseMemObject(d_qv_gpu);
    clReleaseMemObject(d_fv_gpu);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(box_cpu); free(rv_cpu); free(fv_cpu); free(ref); free(qv_cpu);
    return mismatches != 0;
}

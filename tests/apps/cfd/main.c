/* An unstructured-mesh Euler solver's time loop, written the way CFD
   benchmark hosts are: per iteration the variables are copied to
   old_variables on the device (clEnqueueCopyBuffer), one step-factor
   launch, then RK stages of a flux launch and a time-step launch whose
   stage index j changes every launch. The mesh is a W x H grid given as
   an unstructured one (four neighbours per element through an index
   array, walls and far field at its edges). Prints a checksum of the
   final variables' bits and the mismatch count against its own CPU
   reference: ./cfd [W H ITERATIONS]. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include <CL/cl.h>
#include "cfd.h"

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

/* The CPU reference, element by element as the kernels compute it. */
static void velocity(float d, const float m[3], float v[3])
{
    for (int c = 0; c < 3; c++)
        v[c] = m[c] / d;
}

static float pressure(float d, float e, const float v[3])
{
    float s = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    return (GAMMA - 1.0f) * (e - 0.5f * d * s);
}

static void load(const float *vars, int nelr, int i, float *d, float m[3], float *e)
{
    *d = vars[i + VAR_DENSITY * nelr];
    for (int c = 0; c < 3; c++)
        m[c] = vars[i + (VAR_MOMENTUM + c) * nelr];
    *e = vars[i + VAR_ENERGY * nelr];
}

static void contributions(float d, const float m[3], float e, float p, const float v[3],
                          float f[4][3])
{
    (void)d;
    for (int c = 0; c < 3; c++)
        f[0][c] = v[0] * m[c] + (c == 0 ? p : 0.0f);
    f[1][0] = f[0][1];
    f[1][1] = v[1] * m[1] + p;
    f[1][2] = v[1] * m[2];
    f[2][0] = f[0][2];
    f[2][1] = f[1][2];
    f[2][2] = v[2] * m[2] + p;
    for (int c = 0; c < 3; c++)
        f[3][c] = v[c] * (e + p);
}

static void reference(const int *nb, const float *normals, const float *areas, float *vars,
                      int nelr, int iterations)
{
    float *old = malloc(sizeof(float) * NVAR * nelr);
    float *flux = malloc(sizeof(float) * NVAR * nelr);
    float *step = malloc(sizeof(float) * nelr);
    for (int it = 0; it < iterations; it++) {
        memcpy(old, vars, sizeof(float) * NVAR * nelr);
        for (int i = 0; i < nelr; i++) {
            float d, m[3], e, v[3];
            load(vars, nelr, i, &d, m, &e);
            velocity(d, m, v);
            float s = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
            float p = (GAMMA - 1.0f) * (e - 0.5f * d * s);
            step[i] = 0.5f / (sqrtf(areas[i]) * (sqrtf(s) + sqrtf(GAMMA * p / d)));
        }
        for (int j = 0; j < RK; j++) {
            for (int i = 0; i < nelr; i++) {
                float d, m[3], e, v[3], f[4][3];
                load(vars, nelr, i, &d, m, &e);
                velocity(d, m, v);
                float p = pressure(d, e, v);
                contributions(d, m, e, p, v, f);
                float fd = 0.0f, fe = 0.0f, fm[3] = {0.0f, 0.0f, 0.0f};
                for (int k = 0; k < NNB; k++) {
                    int n = nb[i + k * nelr];
                    float nv[3];
                    for (int c = 0; c < 3; c++)
                        nv[c] = normals[i + (k + c * NNB) * nelr];
                    if (n >= 0) {
                        float dn, mn[3], en, vn[3], fn[4][3];
                        load(vars, nelr, n, &dn, mn, &en);
                        velocity(dn, mn, vn);
                        float pn = pressure(dn, en, vn);
                        contributions(dn, mn, en, pn, vn, fn);
                        float factor = SMOOTHING * 0.5f;
                        fd += factor * (d - dn);
                        fe += factor * (e - en);
                        for (int c = 0; c < 3; c++)
                            fm[c] += factor * (m[c] - mn[c]);
                        fd += 0.5f * (nv[0] * (mn[0] + m[0]) + nv[1] * (mn[1] + m[1]) + nv[2] * (mn[2] + m[2]));
                        fe += 0.5f * (nv[0] * (fn[3][0] + f[3][0]) + nv[1] * (fn[3][1] + f[3][1])
                                      + nv[2] * (fn[3][2] + f[3][2]));
                        for (int c = 0; c < 3; c++)
                            fm[c] += 0.5f * (nv[0] * (fn[c][0] + f[c][0]) + nv[1] * (fn[c][1] + f[c][1])
                                             + nv[2] * (fn[c][2] + f[c][2]));
                    } else if (n == WALL) {
                        for (int c = 0; c < 3; c++)
                            fm[c] += nv[c] * p;
                    } else {
                        fd += nv[0] * FAR_MOMENTUM;
                        fe += nv[0] * FAR_ENERGY;
                    }
                }
                flux[i + VAR_DENSITY * nelr] = fd;
                for (int c = 0; c < 3; c++)
                    flux[i + (VAR_MOMENTUM + c) * nelr] = fm[c];
                flux[i + VAR_ENERGY * nelr] = fe;
            }
            for (int i = 0; i < nelr; i++) {
                float factor = step[i] / (float)(RK + 1 - j);
                for (int v = 0; v < NVAR; v++)
                    vars[i + v * nelr] = old[i + v * nelr] + factor * flux[i + v * nelr];
            }
        }
    }
    free(old);
    free(flux);
    free(step);
}

int main(int argc, char **argv)
{
    int w = argc > 1 ? atoi(argv[1]) : 64;
    int h = argc > 2 ? atoi(argv[2]) : 64;
    int iterations = argc > 3 ? atoi(argv[3]) : 4;
    int nelr = w * h;
    int *nb = malloc(sizeof(int) * NNB * nelr);
    float *normals = malloc(sizeof(float) * 3 * NNB * nelr);
    float *areas = malloc(sizeof(float) * nelr);
    float *vars = malloc(sizeof(float) * NVAR * nelr);
    float *ref = malloc(sizeof(float) * NVAR * nelr);
    for (int i = 0; i < nelr; i++) {
        int x = i % w, y = i / w;
        nb[i + 0 * nelr] = x > 0 ? i - 1 : WALL;
        nb[i + 1 * nelr] = x < w - 1 ? i + 1 : FAR_FIELD;
        nb[i + 2 * nelr] = y > 0 ? i - w : WALL;
        nb[i + 3 * nelr] = y < h - 1 ? i + w : WALL;
        for (int k = 0; k < NNB; k++)
            for (int c = 0; c < 3; c++)
                normals[i + (k + c * NNB) * nelr] =
                    0.01f * (float)(((i + 7 * k + 13 * c) % 11) - 5);
        areas[i] = 1.0f + 0.1f * (float)(i % 7);
        vars[i + VAR_DENSITY * nelr] = 1.4f + 0.01f * (float)((x * 3 + y) % 5);
        vars[i + (VAR_MOMENTUM + 0) * nelr] = 0.5f + 0.01f * (float)(x % 3);
        vars[i + (VAR_MOMENTUM + 1) * nelr] = 0.1f;
        vars[i + (VAR_MOMENTUM + 2) * nelr] = 0.01f * (float)(y % 4);
        vars[i + VAR_ENERGY * nelr] = 2.5f + 0.02f * (float)((x + y) % 3);
    }
    memcpy(ref, vars, sizeof(float) * NVAR * nelr);

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err, "clCreateCommandQueue");

    size_t var_bytes = sizeof(float) * NVAR * nelr;
    cl_mem d_nb = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(int) * NNB * nelr, nb, &err);
    CHECK(err, "clCreateBuffer neighbours");
    cl_mem d_normals = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(float) * 3 * NNB * nelr, normals, &err);
    CHECK(err, "clCreateBuffer normals");
    cl_mem d_areas = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(float) * nelr, areas, &err);
    CHECK(err, "clCreateBuffer areas");
    cl_mem d_vars = clCreateBuffer(context, CL_MEM_READ_WRITE, var_bytes, NULL, &err);
    CHECK(err, "clCreateBuffer variables");
    cl_mem d_old = clCreateBuffer(context, CL_MEM_READ_WRITE, var_bytes, NULL, &err);
    CHECK(err, "clCreateBuffer old_variables");
    cl_mem d_fluxes = clCreateBuffer(context, CL_MEM_READ_WRITE, var_bytes, NULL, &err);
    CHECK(err, "clCreateBuffer fluxes");
    cl_mem d_step = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(float) * nelr, NULL, &err);
    CHECK(err, "clCreateBuffer step_factors");
    CHECK(clEnqueueWriteBuffer(queue, d_vars, CL_TRUE, 0, var_bytes, vars, 0, NULL, NULL), "write variables");

    size_t len;
    char *source = read_file("kernel.cl", &len);
    cl_program program = clCreateProgramWithSource(context, 1, (const char **)&source, &len, &err);
    CHECK(err, "clCreateProgramWithSource");
    free(source);
    err = clBuildProgram(program, 1, &device, "-I. -cl-mad-enable", NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[8192];
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build failed:\n%s\n", log);
        exit(2);
    }
    cl_kernel k_step = clCreateKernel(program, "step_factor", &err);
    CHECK(err, "clCreateKernel step_factor");
    cl_kernel k_flux = clCreateKernel(program, "compute_flux", &err);
    CHECK(err, "clCreateKernel compute_flux");
    cl_kernel k_time = clCreateKernel(program, "time_step", &err);
    CHECK(err, "clCreateKernel time_step");
    CHECK(clSetKernelArg(k_step, 0, sizeof(cl_mem), &d_vars), "arg");
    CHECK(clSetKernelArg(k_step, 1, sizeof(cl_mem), &d_areas), "arg");
    CHECK(clSetKernelArg(k_step, 2, sizeof(cl_mem), &d_step), "arg");
    CHECK(clSetKernelArg(k_step, 3, sizeof(int), &nelr), "arg");
    CHECK(clSetKernelArg(k_flux, 0, sizeof(cl_mem), &d_nb), "arg");
    CHECK(clSetKernelArg(k_flux, 1, sizeof(cl_mem), &d_normals), "arg");
    CHECK(clSetKernelArg(k_flux, 2, sizeof(cl_mem), &d_vars), "arg");
    CHECK(clSetKernelArg(k_flux, 3, sizeof(cl_mem), &d_fluxes), "arg");
    CHECK(clSetKernelArg(k_flux, 4, sizeof(int), &nelr), "arg");
    CHECK(clSetKernelArg(k_time, 1, sizeof(int), &nelr), "arg");
    CHECK(clSetKernelArg(k_time, 2, sizeof(cl_mem), &d_old), "arg");
    CHECK(clSetKernelArg(k_time, 3, sizeof(cl_mem), &d_vars), "arg");
    CHECK(clSetKernelArg(k_time, 4, sizeof(cl_mem), &d_step), "arg");
    CHECK(clSetKernelArg(k_time, 5, sizeof(cl_mem), &d_fluxes), "arg");

    size_t local = 64;
    size_t global = ((size_t)nelr + local - 1) / local * local;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int it = 0; it < iterations; it++) {
        CHECK(clEnqueueCopyBuffer(queue, d_vars, d_old, 0, 0, var_bytes, 0, NULL, NULL), "copy variables");
        CHECK(clEnqueueNDRangeKernel(queue, k_step, 1, NULL, &global, &local, 0, NULL, NULL), "launch step_factor");
        for (int j = 0; j < RK; j++) {
            CHECK(clEnqueueNDRangeKernel(queue, k_flux, 1, NULL, &global, &local, 0, NULL, NULL), "launch compute_flux");
            CHECK(clSetKernelArg(k_time, 0, sizeof(int), &j), "arg j");
            CHECK(clEnqueueNDRangeKernel(queue, k_time, 1, NULL, &global, &local, 0, NULL, NULL), "launch time_step");
        }
    }
    CHECK(clFinish(queue), "clFinish");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CHECK(clEnqueueReadBuffer(queue, d_vars, CL_TRUE, 0, var_bytes, vars, 0, NULL, NULL), "read variables");
    fprintf(stderr, "device section: %.1f ms\n",
            (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);

    reference(nb, normals, areas, ref, nelr, iterations);
    int mismatches = 0;
    unsigned checksum = 0;
    for (int i = 0; i < NVAR * nelr; i++) {
        float tol = 1e-3f * (fabsf(ref[i]) + 1.0f);
        if (!(fabsf(vars[i] - ref[i]) <= tol))
            mismatches++;
        unsigned bits;
        memcpy(&bits, &vars[i], sizeof bits);
        checksum = checksum * 31u + bits;
    }
    printf("cfd %dx%d iterations=%d launches=%d checksum %08x: %d mismatches\n", w, h,
           iterations, iterations * (1 + 2 * RK), checksum, mismatches);

    clReleaseKernel(k_step);
    clReleaseKernel(k_flux);
    clReleaseKernel(k_time);
    clReleaseProgram(program);
    clReleaseMemObject(d_nb);
    clReleaseMemObject(d_normals);
    clReleaseMemObject(d_areas);
    clReleaseMemObject(d_vars);
    clReleaseMemObject(d_old);
    clReleaseMemObject(d_fluxes);
    clReleaseMemObject(d_step);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(nb);
    free(normals);
    free(areas);
    free(vars);
    free(ref);
    return mismatches ? 1 : 0;
}

/*
 * resident_jacobi1d.c -- 1-D Jacobi for 50 time steps through clpart buffer
 * handles: the two arrays stay on the devices between launches (ping-pong
 * A -> B, B -> A), split over every device clpart sees, with the shares
 * changed half-way. In between, the host reads a range of one array and
 * writes one element of the other, as an application checking progress and
 * injecting a source would. The result is compared with a CPU reference
 * element by element (bit for bit).
 *
 *   cc resident_jacobi1d.c $(pkg-config --cflags --libs clpart) -o jacobi1d
 *   POCL_DEVICES="pthread basic" ./jacobi1d kernels/iterative/jacobi1d.cl [N]
 *
 * Prints the bytes moved per launch and in total, then PASS; exits 1 on a
 * failure, 2 on bad arguments.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <clpart.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS 50

#define CHECK(call)                                                            \
    do {                                                                       \
        int st_ = (call);                                                      \
        if (st_ != CLPART_SUCCESS) {                                           \
            fprintf(stderr, "jacobi1d: %s failed: %s: %s\n", #call,           \
                    clpart_status_name(st_), clpart_last_error());             \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)len + 1);
    if (text && fread(text, 1, (size_t)len, f) != (size_t)len) {
        free(text);
        text = NULL;
    }
    if (text)
        text[len] = '\0';
    fclose(f);
    return text;
}

/* One step of the kernel on the CPU, in the same float operations. */
static void step_cpu(const float *src, float *dst, int n)
{
    for (int i = 1; i < n - 1; i++)
        dst[i] = 0.33333334f * (src[i - 1] + src[i] + src[i + 1]);
}

static int same_bits(const float *got, const float *want, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        if (memcmp(&got[i], &want[i], sizeof(float)) != 0) {
            fprintf(stderr, "jacobi1d: %s differs at element %zu: %.9g, expected %.9g\n",
                    what, i, got[i], want[i]);
            return 0;
        }
    }
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: jacobi1d KERNEL.cl [N]\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 4096;
    size_t local = 64;
    if (n < 3 || (size_t)n % local != 0) {
        fprintf(stderr, "jacobi1d: N must be a multiple of %zu, at least 64\n", local);
        return 2;
    }
    char *source = read_file(argv[1]);
    if (!source) {
        fprintf(stderr, "jacobi1d: cannot read '%s'\n", argv[1]);
        return 2;
    }

    size_t bytes = (size_t)n * sizeof(float);
    float *ref_a = malloc(bytes), *ref_b = malloc(bytes), *got = malloc(bytes);
    if (!ref_a || !ref_b || !got) {
        fprintf(stderr, "jacobi1d: out of memory\n");
        return 1;
    }
    uint32_t x = 12345;
    for (int i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        ref_a[i] = (float)(x >> 8) / 16777216.0f;
    }
    memcpy(ref_b, ref_a, bytes); /* the fixed boundary values agree */

    clpart_plan *plan;
    CHECK(clpart_plan_create_from_source(source, "jacobi1d", NULL, &plan));
    clpart_buffer *a, *b;
    CHECK(clpart_buffer_create_from_host("float", ref_a, bytes, &a));
    CHECK(clpart_buffer_create("float", (size_t)n, &b));
    CHECK(clpart_buffer_write(b, 0, bytes, ref_b));
    size_t size = 0;
    CHECK(clpart_buffer_size(a, &size));
    if (size != bytes) {
        fprintf(stderr, "jacobi1d: clpart_buffer_size gives %zu, expected %zu\n", size, bytes);
        return 1;
    }
    CHECK(clpart_plan_set_arg_scalar(plan, 2, sizeof(int), &n));

    cl_uint n_devices = 0;
    CHECK(clpart_device_count(&n_devices));
    double shares[8];
    if (n_devices > 8)
        n_devices = 8;
    size_t global = (size_t)n;
    uint64_t total = 0, per_launch_whole = 0;
    for (int s = 0; s < STEPS; s++) {
        /* even steps A -> B, odd steps B -> A */
        clpart_buffer *src = s % 2 == 0 ? a : b, *dst = s % 2 == 0 ? b : a;
        float *ref_src = s % 2 == 0 ? ref_a : ref_b, *ref_dst = s % 2 == 0 ? ref_b : ref_a;
        CHECK(clpart_plan_set_arg_resident(plan, 0, src));
        CHECK(clpart_plan_set_arg_resident(plan, 1, dst));
        for (cl_uint d = 0; d < n_devices; d++)
            shares[d] = s < STEPS / 2 ? 1.0 : (double)(d + 1); /* uneven in the second half */
        CHECK(clpart_plan_launch(plan, 1, NULL, &global, &local, n_devices, NULL, shares));
        step_cpu(ref_src, ref_dst, n);

        clpart_report r;
        CHECK(clpart_plan_report(plan, &r));
        total += r.bytes_total;
        per_launch_whole = r.bytes_whole_buffers;
        printf("step %2d: %s, %llu bytes moved\n", s + 1, r.split ? "split" : "whole",
               (unsigned long long)r.bytes_total);

        if (s == 20) {
            /* the host looks at a range in the middle of the new array */
            size_t off = (size_t)(n / 2 - 8) * sizeof(float);
            CHECK(clpart_buffer_read(dst, off, 16 * sizeof(float), got));
            if (!same_bits(got, ref_dst + n / 2 - 8, 16, "the range read at step 21"))
                return 1;
        }
        if (s == 30) {
            /* the host injects a value into the array the next step reads */
            float v = 0.75f;
            size_t at = (size_t)n / 3;
            CHECK(clpart_buffer_write(dst, at * sizeof(float), sizeof(float), &v));
            ref_dst[at] = v;
        }
    }
    /* after an even number of steps the result is in A */
    CHECK(clpart_buffer_read_all(a, got, bytes));
    if (!same_bits(got, ref_a, (size_t)n, "A"))
        return 1;
    CHECK(clpart_buffer_read_all(b, got, bytes));
    if (!same_bits(got, ref_b, (size_t)n, "B"))
        return 1;

    const char *text;
    CHECK(clpart_plan_report_text(plan, &text));
    printf("%s\n", text);
    printf("total: %llu bytes moved over %d launches (one launch moving whole buffers: %llu)\n",
           (unsigned long long)total, STEPS, (unsigned long long)per_launch_whole);

    /* the plan holds the data of a released handle until it is released */
    CHECK(clpart_buffer_release(b));
    CHECK(clpart_buffer_release(a));
    if (clpart_buffer_release(a) != CLPART_INVALID_HANDLE) {
        fprintf(stderr, "jacobi1d: releasing a buffer twice must fail\n");
        return 1;
    }
    CHECK(clpart_plan_release(plan));
    free(source);
    free(ref_a);
    free(ref_b);
    free(got);
    printf("PASS\n");
    return 0;
}

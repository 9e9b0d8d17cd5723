/* Breadth-first search over a random directed graph in CSR form (a node
   array of edge start and degree, an edge array), written the way the
   heterogeneous benchmark hosts write it: per level a launch of
   bfs_expand and one of bfs_update, then the one-byte `over` flag read
   back, until a level changes nothing. The graph comes from a fixed LCG
   seed, degrees 2 to 8, the source node 0; the kernels are built with -I.
   for the shared Node record. The host checks every node's cost against
   its own level-by-level sweep of the same masks.
   ./bfs [NODES] */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <CL/cl.h>
#include "bfs.h"

#define CHECK(err, what) do { if ((err) != CL_SUCCESS) { \
    fprintf(stderr, "%s failed: %d\n", what, (int)(err)); exit(2); } } while (0)
#define WORK_GROUP_SIZE 256

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

static unsigned seed = 20240611u;

static unsigned lcg(void)
{
    seed = seed * 1664525u + 1013904223u;
    return seed >> 8;
}

/* The CPU reference: the same two sweeps per level over the same masks. */
static int reference(const Node *nodes, const int *edges, int n, int source, int *cost)
{
    char *mask = calloc(n, 1), *updating = calloc(n, 1), *visited = calloc(n, 1);
    for (int i = 0; i < n; i++)
        cost[i] = -1;
    mask[source] = visited[source] = 1;
    cost[source] = 0;
    int levels = 0, over;
    do {
        over = 0;
        for (int tid = 0; tid < n; tid++) {
            if (!mask[tid])
                continue;
            mask[tid] = 0;
            for (int i = nodes[tid].starting; i < nodes[tid].starting + nodes[tid].no_of_edges; i++) {
                int id = edges[i];
                if (!visited[id]) {
                    cost[id] = cost[tid] + 1;
                    updating[id] = 1;
                }
            }
        }
        for (int tid = 0; tid < n; tid++) {
            if (updating[tid]) {
                mask[tid] = visited[tid] = 1;
                over = 1;
                updating[tid] = 0;
            }
        }
        levels++;
    } while (over);
    free(mask); free(updating); free(visited);
    return levels;
}

int main(int argc, char **argv)
{
    int no_of_nodes = argc > 1 ? atoi(argv[1]) : 8192;
    if (no_of_nodes <= 0) { fprintf(stderr, "need NODES > 0\n"); return 2; }
    Node *h_graph_nodes = malloc(sizeof(Node) * no_of_nodes);
    int edge_list_size = 0;
    for (int i = 0; i < no_of_nodes; i++) {
        h_graph_nodes[i].starting = edge_list_size;
        h_graph_nodes[i].no_of_edges = 2 + (int)(lcg() % 7);
        edge_list_size += h_graph_nodes[i].no_of_edges;
    }
    int *h_graph_edges = malloc(sizeof(int) * edge_list_size);
    for (int i = 0; i < edge_list_size; i++)
        h_graph_edges[i] = (int)(lcg() % (unsigned)no_of_nodes);
    int source = 0;
    char *h_graph_mask = calloc(no_of_nodes, 1), *h_updating_graph_mask = calloc(no_of_nodes, 1);
    char *h_graph_visited = calloc(no_of_nodes, 1);
    int *h_cost = malloc(sizeof(int) * no_of_nodes), *ref = malloc(sizeof(int) * no_of_nodes);
    for (int i = 0; i < no_of_nodes; i++)
        h_cost[i] = -1;
    h_graph_mask[source] = h_graph_visited[source] = 1;
    h_cost[source] = 0;

    cl_int err;
    cl_platform_id platform;
    CHECK(clGetPlatformIDs(1, &platform, NULL), "clGetPlatformIDs");
    cl_device_id device;
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
    CHECK(err, "clCreateCommandQueue");

    cl_mem d_graph_nodes = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                          sizeof(Node) * no_of_nodes, h_graph_nodes, &err);
    CHECK(err, "clCreateBuffer nodes");
    cl_mem d_graph_edges = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                          sizeof(int) * edge_list_size, h_graph_edges, &err);
    CHECK(err, "clCreateBuffer edges");
    cl_mem d_graph_mask = clCreateBuffer(context, CL_MEM_READ_WRITE, no_of_nodes, NULL, &err);
    CHECK(err, "clCreateBuffer mask");
    cl_mem d_updating_graph_mask = clCreateBuffer(context, CL_MEM_READ_WRITE, no_of_nodes, NULL, &err);
    CHECK(err, "clCreateBuffer updating mask");
    cl_mem d_graph_visited = clCreateBuffer(context, CL_MEM_READ_WRITE, no_of_nodes, NULL, &err);
    CHECK(err, "clCreateBuffer visited");
    cl_mem d_cost = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(int) * no_of_nodes, NULL, &err);
    CHECK(err, "clCreateBuffer cost");
    cl_mem d_over = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(char), NULL, &err);
    CHECK(err, "clCreateBuffer over");
    CHECK(clEnqueueWriteBuffer(queue, d_graph_mask, CL_TRUE, 0, no_of_nodes, h_graph_mask, 0, NULL, NULL), "write mask");
    CHECK(clEnqueueWriteBuffer(queue, d_updating_graph_mask, CL_TRUE, 0, no_of_nodes, h_updating_graph_mask, 0, NULL, NULL), "write updating mask");
    CHECK(clEnqueueWriteBuffer(queue, d_graph_visited, CL_TRUE, 0, no_of_nodes, h_graph_visited, 0, NULL, NULL), "write visited");
    CHECK(clEnqueueWriteBuffer(queue, d_cost, CL_TRUE, 0, sizeof(int) * no_of_nodes, h_cost, 0, NULL, NULL), "write cost");

    size_t len;
    char *source_text = read_file("kernel.cl", &len);
    cl_program program = clCreateProgramWithSource(context, 1, (const char **)&source_text, &len, &err);
    CHECK(err, "clCreateProgramWithSource");
    free(source_text);
    err = clBuildProgram(program, 1, &device, "-I.", NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[8192];
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build failed:\n%s\n", log);
        exit(2);
    }
    cl_kernel k_expand = clCreateKernel(program, "bfs_expand", &err);
    CHECK(err, "clCreateKernel bfs_expand");
    cl_kernel k_update = clCreateKernel(program, "bfs_update", &err);
    CHECK(err, "clCreateKernel bfs_update");
    CHECK(clSetKernelArg(k_expand, 0, sizeof(cl_mem), &d_graph_nodes), "arg");
    CHECK(clSetKernelArg(k_expand, 1, sizeof(cl_mem), &d_graph_edges), "arg");
    CHECK(clSetKernelArg(k_expand, 2, sizeof(cl_mem), &d_graph_mask), "arg");
    CHECK(clSetKernelArg(k_expand, 3, sizeof(cl_mem), &d_updating_graph_mask), "arg");
    CHECK(clSetKernelArg(k_expand, 4, sizeof(cl_mem), &d_graph_visited), "arg");
    CHECK(clSetKernelArg(k_expand, 5, sizeof(cl_mem), &d_cost), "arg");
    CHECK(clSetKernelArg(k_expand, 6, sizeof(int), &no_of_nodes), "arg");
    CHECK(clSetKernelArg(k_update, 0, sizeof(cl_mem), &d_graph_mask), "arg");
    CHECK(clSetKernelArg(k_update, 1, sizeof(cl_mem), &d_updating_graph_mask), "arg");
    CHECK(clSetKernelArg(k_update, 2, sizeof(cl_mem), &d_graph_visited), "arg");
    CHECK(clSetKernelArg(k_update, 3, sizeof(cl_mem), &d_over), "arg");
    CHECK(clSetKernelArg(k_update, 4, sizeof(int), &no_of_nodes), "arg");

    size_t local = WORK_GROUP_SIZE;
    size_t global = ((size_t)no_of_nodes + local - 1) / local * local;
    int levels = 0;
    char h_over;
    double t0 = now_ms();
    do {
        h_over = 0;
        CHECK(clEnqueueWriteBuffer(queue, d_over, CL_TRUE, 0, sizeof(char), &h_over, 0, NULL, NULL), "write over");
        CHECK(clEnqueueNDRangeKernel(queue, k_expand, 1, NULL, &global, &local, 0, NULL, NULL), "launch bfs_expand");
        CHECK(clEnqueueNDRangeKernel(queue, k_update, 1, NULL, &global, &local, 0, NULL, NULL), "launch bfs_update");
        CHECK(clFinish(queue), "clFinish");
        CHECK(clEnqueueReadBuffer(queue, d_over, CL_TRUE, 0, sizeof(char), &h_over, 0, NULL, NULL), "read over");
        levels++;
    } while (h_over);
    fprintf(stderr, "device section: %.1f ms\n", now_ms() - t0);
    CHECK(clEnqueueReadBuffer(queue, d_cost, CL_TRUE, 0, sizeof(int) * no_of_nodes, h_cost, 0, NULL, NULL), "read cost");

    int ref_levels = reference(h_graph_nodes, h_graph_edges, no_of_nodes, source, ref);
    int mismatches = ref_levels != levels, reached = 0;
    long cost_sum = 0;
    for (int i = 0; i < no_of_nodes; i++) {
        if (h_cost[i] != ref[i])
            mismatches++;
        if (h_cost[i] >= 0) {
            reached++;
            cost_sum += h_cost[i];
        }
    }
    printf("bfs nodes=%d edges=%d levels=%d reached=%d cost_sum=%ld: %d mismatches\n", no_of_nodes,
           edge_list_size, levels, reached, cost_sum, mismatches);

    clReleaseKernel(k_expand);
    clReleaseKernel(k_update);
    clReleaseProgram(program);
    clReleaseMemObject(d_graph_nodes);
    clReleaseMemObject(d_graph_edges);
    clReleaseMemObject(d_graph_mask);
    clReleaseMemObject(d_updating_graph_mask);
    clReleaseMemObject(d_graph_visited);
    clReleaseMemObject(d_cost);
    clReleaseMemObject(d_over);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    free(h_graph_nodes); free(h_graph_edges); free(h_graph_mask); free(h_updating_graph_mask);
    free(h_graph_visited); free(h_cost); free(ref);
    return mismatches != 0;
}

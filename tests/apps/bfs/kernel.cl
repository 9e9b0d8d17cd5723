/* Breadth-first search, one level per pair of launches, as the
   heterogeneous suites write it. bfs_expand: each node of the frontier
   (mask) leaves it and marks its unvisited neighbours for the next level,
   giving them its cost plus one; several frontier nodes may mark the same
   neighbour, always with the same cost. bfs_update: the marked nodes
   become the frontier and visited, and raise the host's flag. */
#include "bfs.h"

__kernel void bfs_expand(__global const Node *g_graph_nodes, __global const int *g_graph_edges,
                         __global char *g_graph_mask, __global char *g_updating_graph_mask,
                         __global const char *g_graph_visited, __global int *g_cost,
                         const int no_of_nodes)
{
    int tid = get_global_id(0);
    if (tid < no_of_nodes && g_graph_mask[tid]) {
        g_graph_mask[tid] = 0;
        int first = g_graph_nodes[tid].starting;
        int last = first + g_graph_nodes[tid].no_of_edges;
        for (int i = first; i < last; i++) {
            int id = g_graph_edges[i];
            if (!g_graph_visited[id]) {
                g_cost[id] = g_cost[tid] + 1;
                g_updating_graph_mask[id] = 1;
            }
        }
    }
}

__kernel void bfs_update(__global char *g_graph_mask, __global char *g_updating_graph_mask,
                         __global char *g_graph_visited, __global char *g_over,
                         const int no_of_nodes)
{
    int tid = get_global_id(0);
    if (tid < no_of_nodes && g_updating_graph_mask[tid]) {
        g_graph_mask[tid] = 1;
        g_graph_visited[tid] = 1;
        *g_over = 1;
        g_updating_graph_mask[tid] = 0;
    }
}

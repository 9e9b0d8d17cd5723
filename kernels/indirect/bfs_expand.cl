// Breadth-first search, the first kernel of a level, over a graph in
// compressed rows (node tid's edges are edges[starts[tid] ..
// starts[tid + 1])): each frontier node gives its unvisited neighbours the
// next level, cost[id] = cost[tid] + 1, and marks them in updating. Both
// written subscripts are data dependent: cost and updating go whole to
// each device and merge element by element with the run-time check (no
// two devices may write different values to one element, none may change
// an element in another slice's read range of cost, cost[tid]). The runs'
// graph is a star around the hub node 0, the one node neither visited nor
// in the frontier, with the frontier at level 0: every device sets cost[0]
// and updating[0] to 1, the same values, and they merge.
// @run --global 4096 --local 128 --arg starts=seq:4001 --arg edges=zeros:4000 --arg frontier=seq:4000 --arg visited=seq:4000 --arg cost=zeros:4000 --arg updating=zeros:4000 --arg nnodes=4000
// @run --global 1000 --local 8 --arg starts=seq:1000 --arg edges=zeros:999 --arg frontier=seq:999 --arg visited=seq:999 --arg cost=zeros:999 --arg updating=rand:999:1 --arg nnodes=999
// @expect splittable whole=edges,visited,cost,updating
__kernel void bfs_expand(__global const int *starts, __global const int *edges,
                         __global const int *frontier, __global const int *visited,
                         __global int *cost, __global int *updating, int nnodes)
{
    int tid = get_global_id(0);
    if (tid < nnodes && frontier[tid]) {
        for (int e = starts[tid]; e < starts[tid + 1]; e++) {
            int id = edges[e];
            if (!visited[id]) {
                cost[id] = cost[tid] + 1;
                updating[id] = 1;
            }
        }
    }
}

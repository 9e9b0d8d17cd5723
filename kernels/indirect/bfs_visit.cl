// Breadth-first search, the second kernel of a level: each node the first
// kernel reached (updating[tid]) joins the next frontier, is marked
// visited, and raises the "not done" flag over[0] that the host tests.
// Every such work-item writes over[0] with the same value: the writes to it
// overlap between slices and merge with the run-time conflict check.
// @run --global 4096 --local 128 --arg updating=rand:4000:1 --arg frontier=zeros:4000 --arg visited=zeros:4000 --arg over=zeros:1 --arg nnodes=4000
// @run --global 1000 --local 8 --arg updating=rand:999:2 --arg frontier=rand:999:3 --arg visited=zeros:999 --arg over=zeros:1 --arg nnodes=999
// @expect splittable
__kernel void bfs_visit(__global int *updating, __global int *frontier,
                        __global int *visited, __global int *over, int nnodes)
{
    int tid = get_global_id(0);
    if (tid < nnodes && updating[tid]) {
        frontier[tid] = 1;
        visited[tid] = 1;
        over[0] = 1;
        updating[tid] = 0;
    }
}

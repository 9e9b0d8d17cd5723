// One step of a B+-tree search as tree benchmarks write it: each
// work-group walks one query down the tree, its work-items comparing the
// keys of a node through the node struct's array members
// (`knodes[cur[bid]].keys[thid]`). The nodes are read through indices
// loaded from memory (whole); the per-query arrays are bounded by the
// group id and split.
// @run --global 1024 --local 16 --arg height=3 --arg knodes=zeros:40 --arg knodes_elem=40 --arg cur=zeros:64 --arg offset=zeros:64 --arg keys=seq:64 --arg ans=zeros:64
// @run --global 512 --local 8 --arg height=2 --arg knodes=zeros:10 --arg knodes_elem=10 --arg cur=zeros:64 --arg offset=zeros:64 --arg keys=zeros:64 --arg ans=rand:64:1
// @expect splittable whole=knodes
typedef struct knode {
    int location;
    int indices[17];
    int keys[17];
    bool is_leaf;
    int num_keys;
} knode;

__kernel void struct_array_member_search(long height, __global const knode *knodes,
                                         long knodes_elem, __global long *cur,
                                         __global long *offset, __global const int *keys,
                                         __global int *ans)
{
    int thid = get_local_id(0);
    int bid = get_group_id(0);
    for (int i = 0; i < height; i++) {
        if (knodes[cur[bid]].keys[thid] <= keys[bid] && knodes[cur[bid]].keys[thid + 1] > keys[bid]) {
            if (knodes[offset[bid]].indices[thid] < knodes_elem)
                offset[bid] = knodes[offset[bid]].indices[thid];
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
        if (thid == 0)
            cur[bid] = offset[bid];
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
    if (knodes[cur[bid]].keys[thid] == keys[bid])
        ans[bid] = knodes[cur[bid]].location + thid;
}

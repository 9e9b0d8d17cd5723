/* The graph's node record, shared by the BFS kernels and the host (built
   with -I.): where the node's edges start in the edge array and how many
   there are. */
typedef struct {
    int starting;
    int no_of_edges;
} Node;

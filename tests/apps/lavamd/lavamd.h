/* Types and sizes shared by the particle-interaction kernel and its host
   (the kernel is built with -I.): a box's particles lie at
   offset .. offset + NUMBER_PAR_PER_BOX - 1 of the particle arrays, and a
   box lists its (up to 26) neighbour boxes. `long` is 64 bits on both
   sides (LP64 host, OpenCL C). */
#define NUMBER_PAR_PER_BOX 100
#define NUMBER_THREADS 128

#define DOT(A, B) ((A).x * (B).x + (A).y * (B).y + (A).z * (B).z)

typedef float fp;

typedef struct { fp x, y, z; } THREE_VECTOR;

typedef struct { fp v, x, y, z; } FOUR_VECTOR;

typedef struct {
    int x, y, z;
    int number;
    long offset;
} nei_str;

typedef struct {
    int x, y, z;
    int number;
    long offset;
    int nn;
    nei_str nei[26];
} box_str;

/* kernel arguments passed by value */
typedef struct { fp alpha; } par_str;

typedef struct {
    int boxes1d_arg;
    long number_boxes;
    long space_elem;
} dim_str;

/* Constants shared by the CFD kernels and the host (built with -I.). */
#define GAMMA 1.4f
#define NVAR 5
#define NNB 4
#define RK 3
#define VAR_DENSITY 0
#define VAR_MOMENTUM 1
#define VAR_ENERGY 4
#define WALL (-1)
#define FAR_FIELD (-2)
#define SMOOTHING 0.2f
#define FAR_MOMENTUM 0.05f
#define FAR_ENERGY 2.6f

// Monte Carlo random walks in the spirit of the thesis's hybrid PDE solver
// (section 4.4): each work-group owns one start point (picked from its group
// id) on a gw x gh grid; each work-item runs nwalks walks of at most maxsteps
// steps with an integer LCG seeded from its global id, adding the boundary
// value where a walk is absorbed. Partial sums are reduced in __local memory in
// a fixed order (two barriers) and the average goes to out[get_group_id(0)].
// bval is read at data-dependent positions, so it is transferred whole.
// The work-group size must be at most 64.
// @run --global 2048 --local 32 --arg bval=rand:256:1 --arg out=zeros:64 --arg gw=16 --arg gh=16 --arg nwalks=4 --arg maxsteps=256 --arg seed=12345
// @run --global 1000 --local 8 --arg bval=rand:300:2 --arg out=zeros:125 --arg gw=20 --arg gh=15 --arg nwalks=3 --arg maxsteps=150 --arg seed=7
// @expect splittable whole=bval
// @float
#define MAX_WG 64
#define NCHUNK 8

uint lcg_next(uint s)
{
    return s * 1664525u + 1013904223u;
}

__kernel void random_walk(__global const float *bval, __global float *out,
                          int gw, int gh, int nwalks, int maxsteps, uint seed)
{
    __local float partial[MAX_WG];
    __local float chunk[NCHUNK];
    int g = get_group_id(0);
    int lid = get_local_id(0);
    int lsize = get_local_size(0);
    int sx = 1 + (g * 7) % (gw - 2);
    int sy = 1 + (g * 13) % (gh - 2);
    uint state = seed ^ ((uint)get_global_id(0) * 2654435761u);
    float acc = 0.0f;

    for (int w = 0; w < nwalks; w++) {
        int x = sx;
        int y = sy;
        int alive = 1;
        for (int s = 0; s < maxsteps; s++) {
            if (alive) {
                state = lcg_next(state);
                uint dir = (state >> 16) & 3u;
                if (dir == 0u)
                    x += 1;
                else if (dir == 1u)
                    x -= 1;
                else if (dir == 2u)
                    y += 1;
                else
                    y -= 1;
                if (x == 0 || x == gw - 1 || y == 0 || y == gh - 1) {
                    acc += bval[y * gw + x];
                    alive = 0;
                }
            }
        }
    }

    partial[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    int nchunk = min(lsize, NCHUNK);
    if (lid < nchunk) {
        float s = 0.0f;
        for (int k = lid; k < lsize; k += NCHUNK)
            s += partial[k];
        chunk[lid] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        float total = 0.0f;
        for (int k = 0; k < nchunk; k++)
            total += chunk[k];
        out[g] = total / (float)(lsize * nwalks);
    }
}

// Private variables of a typedef'd struct, as CFD-style solvers write them
// (FLOAT3 momentum and flux): filled field by field from the arrays, passed
// by value and through a private pointer to an inline helper, copied whole.
// They hold data only; every subscript is affine in the work-item's id.
// @run --global 1024 --local 64 --arg density=rand:1024:1 --arg mom=rand:3072:2 --arg flux=zeros:3072 --arg n=1024
// @run --global 1000 --local 8 --arg density=rand:1000:3 --arg mom=rand:3000:4 --arg flux=rand:3000:5 --arg n=997
// @float
// @expect splittable
typedef struct { float x, y, z; } FLOAT3;

inline void flux_of(FLOAT3 m, float d, __private FLOAT3 *f)
{
    f->x = m.x * d;
    f->y = m.y * d + 1.0f;
    f->z = m.z * d - 1.0f;
}

__kernel void struct_private(__global const float *density, __global const float *mom,
                             __global float *flux, int n)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    FLOAT3 m;
    m.x = mom[i];
    m.y = mom[i + n];
    m.z = mom[i + 2 * n];
    FLOAT3 f;
    flux_of(m, density[i], &f);
    FLOAT3 g = f;
    g.x += m.z;
    flux[i] = g.x;
    flux[i + n] = g.y;
    flux[i + 2 * n] = g.z;
}

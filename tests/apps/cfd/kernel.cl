/* An unstructured-mesh Euler solver's three kernels, in the style of CFD
   benchmark codes: five conserved variables per element in planes of
   nelr (density, momentum x/y/z, energy), FLOAT3 private variables, four
   neighbours per element read through an index array (a neighbour of -1
   is a wall, -2 the far field), and a Runge-Kutta step over fluxes. */
#include "cfd.h"

typedef struct { float x, y, z; } FLOAT3;

inline void velocity_of(float density, FLOAT3 momentum, __private FLOAT3 *v)
{
    v->x = momentum.x / density;
    v->y = momentum.y / density;
    v->z = momentum.z / density;
}

inline float speed_sqd_of(FLOAT3 v)
{
    return v.x * v.x + v.y * v.y + v.z * v.z;
}

inline float pressure_of(float density, float energy, float speed_sqd)
{
    return (GAMMA - 1.0f) * (energy - 0.5f * density * speed_sqd);
}

inline float sound_of(float density, float pressure)
{
    return sqrt(GAMMA * pressure / density);
}

inline void flux_contribution(float density, FLOAT3 momentum, float energy, float pressure,
                              FLOAT3 velocity, __private FLOAT3 *fx, __private FLOAT3 *fy,
                              __private FLOAT3 *fz, __private FLOAT3 *fe)
{
    fx->x = velocity.x * momentum.x + pressure;
    fx->y = velocity.x * momentum.y;
    fx->z = velocity.x * momentum.z;
    fy->x = fx->y;
    fy->y = velocity.y * momentum.y + pressure;
    fy->z = velocity.y * momentum.z;
    fz->x = fx->z;
    fz->y = fy->z;
    fz->z = velocity.z * momentum.z + pressure;
    float de_p = energy + pressure;
    fe->x = velocity.x * de_p;
    fe->y = velocity.y * de_p;
    fe->z = velocity.z * de_p;
}

__kernel void step_factor(__global const float *variables, __global const float *areas,
                          __global float *step_factors, int nelr)
{
    int i = get_global_id(0);
    if (i >= nelr)
        return;
    float density = variables[i + VAR_DENSITY * nelr];
    FLOAT3 momentum;
    momentum.x = variables[i + (VAR_MOMENTUM + 0) * nelr];
    momentum.y = variables[i + (VAR_MOMENTUM + 1) * nelr];
    momentum.z = variables[i + (VAR_MOMENTUM + 2) * nelr];
    float energy = variables[i + VAR_ENERGY * nelr];
    FLOAT3 velocity;
    velocity_of(density, momentum, &velocity);
    float speed_sqd = speed_sqd_of(velocity);
    float pressure = pressure_of(density, energy, speed_sqd);
    float sound = sound_of(density, pressure);
    step_factors[i] = 0.5f / (sqrt(areas[i]) * (sqrt(speed_sqd) + sound));
}

__kernel void compute_flux(__global const int *neighbours, __global const float *normals,
                           __global const float *variables, __global float *fluxes,
                           int nelr)
{
    int i = get_global_id(0);
    if (i >= nelr)
        return;
    float density_i = variables[i + VAR_DENSITY * nelr];
    FLOAT3 momentum_i;
    momentum_i.x = variables[i + (VAR_MOMENTUM + 0) * nelr];
    momentum_i.y = variables[i + (VAR_MOMENTUM + 1) * nelr];
    momentum_i.z = variables[i + (VAR_MOMENTUM + 2) * nelr];
    float energy_i = variables[i + VAR_ENERGY * nelr];
    FLOAT3 velocity_i;
    velocity_of(density_i, momentum_i, &velocity_i);
    float speed_sqd_i = speed_sqd_of(velocity_i);
    float pressure_i = pressure_of(density_i, energy_i, speed_sqd_i);
    FLOAT3 fx_i, fy_i, fz_i, fe_i;
    flux_contribution(density_i, momentum_i, energy_i, pressure_i, velocity_i,
                      &fx_i, &fy_i, &fz_i, &fe_i);

    float flux_density = 0.0f;
    FLOAT3 flux_momentum;
    flux_momentum.x = 0.0f;
    flux_momentum.y = 0.0f;
    flux_momentum.z = 0.0f;
    float flux_energy = 0.0f;
    for (int j = 0; j < NNB; j++) {
        int nb = neighbours[i + j * nelr];
        FLOAT3 normal;
        normal.x = normals[i + (j + 0 * NNB) * nelr];
        normal.y = normals[i + (j + 1 * NNB) * nelr];
        normal.z = normals[i + (j + 2 * NNB) * nelr];
        if (nb >= 0) {
            float density_nb = variables[nb + VAR_DENSITY * nelr];
            FLOAT3 momentum_nb;
            momentum_nb.x = variables[nb + (VAR_MOMENTUM + 0) * nelr];
            momentum_nb.y = variables[nb + (VAR_MOMENTUM + 1) * nelr];
            momentum_nb.z = variables[nb + (VAR_MOMENTUM + 2) * nelr];
            float energy_nb = variables[nb + VAR_ENERGY * nelr];
            FLOAT3 velocity_nb;
            velocity_of(density_nb, momentum_nb, &velocity_nb);
            float pressure_nb = pressure_of(density_nb, energy_nb, speed_sqd_of(velocity_nb));
            FLOAT3 fx_nb, fy_nb, fz_nb, fe_nb;
            flux_contribution(density_nb, momentum_nb, energy_nb, pressure_nb, velocity_nb,
                              &fx_nb, &fy_nb, &fz_nb, &fe_nb);
            float factor = SMOOTHING * 0.5f;
            flux_density += factor * (density_i - density_nb);
            flux_energy += factor * (energy_i - energy_nb);
            flux_momentum.x += factor * (momentum_i.x - momentum_nb.x);
            flux_momentum.y += factor * (momentum_i.y - momentum_nb.y);
            flux_momentum.z += factor * (momentum_i.z - momentum_nb.z);
            flux_density += 0.5f * (normal.x * (momentum_nb.x + momentum_i.x)
                                    + normal.y * (momentum_nb.y + momentum_i.y)
                                    + normal.z * (momentum_nb.z + momentum_i.z));
            flux_energy += 0.5f * (normal.x * (fe_nb.x + fe_i.x) + normal.y * (fe_nb.y + fe_i.y)
                                   + normal.z * (fe_nb.z + fe_i.z));
            flux_momentum.x += 0.5f * (normal.x * (fx_nb.x + fx_i.x) + normal.y * (fx_nb.y + fx_i.y)
                                       + normal.z * (fx_nb.z + fx_i.z));
            flux_momentum.y += 0.5f * (normal.x * (fy_nb.x + fy_i.x) + normal.y * (fy_nb.y + fy_i.y)
                                       + normal.z * (fy_nb.z + fy_i.z));
            flux_momentum.z += 0.5f * (normal.x * (fz_nb.x + fz_i.x) + normal.y * (fz_nb.y + fz_i.y)
                                       + normal.z * (fz_nb.z + fz_i.z));
        } else if (nb == WALL) {
            flux_momentum.x += normal.x * pressure_i;
            flux_momentum.y += normal.y * pressure_i;
            flux_momentum.z += normal.z * pressure_i;
        } else {
            flux_density += normal.x * FAR_MOMENTUM;
            flux_energy += normal.x * FAR_ENERGY;
        }
    }
    fluxes[i + VAR_DENSITY * nelr] = flux_density;
    fluxes[i + (VAR_MOMENTUM + 0) * nelr] = flux_momentum.x;
    fluxes[i + (VAR_MOMENTUM + 1) * nelr] = flux_momentum.y;
    fluxes[i + (VAR_MOMENTUM + 2) * nelr] = flux_momentum.z;
    fluxes[i + VAR_ENERGY * nelr] = flux_energy;
}

__kernel void time_step(int j, int nelr, __global const float *old_variables,
                        __global float *variables, __global const float *step_factors,
                        __global const float *fluxes)
{
    int i = get_global_id(0);
    if (i >= nelr)
        return;
    float factor = step_factors[i] / (float)(RK + 1 - j);
    for (int v = 0; v < NVAR; v++)
        variables[i + v * nelr] = old_variables[i + v * nelr] + factor * fluxes[i + v * nelr];
}

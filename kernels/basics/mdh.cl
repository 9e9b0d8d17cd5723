// Multiple Debye-Huckel potential (thesis listing 3.2, the SOpenCL example).
// One work-item per grid point; a loop over all atoms reads every atom array
// whole, while gx/gy/gz/val are indexed by the global id.
// @run --global 1024 --local 64 --arg ax=rand:50:1 --arg ay=rand:50:2 --arg az=rand:50:3 --arg charge=rand:50:4 --arg size=rand:50:5 --arg gx=rand:1024:6 --arg gy=rand:1024:7 --arg gz=rand:1024:8 --arg val=zeros:1024 --arg pre1=0.5 --arg xkappa=0.1 --arg natoms=50
// @run --global 1000 --local 8 --arg ax=rand:37:11 --arg ay=rand:37:12 --arg az=rand:37:13 --arg charge=rand:37:14 --arg size=rand:37:15 --arg gx=rand:1000:16 --arg gy=rand:1000:17 --arg gz=rand:1000:18 --arg val=zeros:1000 --arg pre1=1.25 --arg xkappa=0.5 --arg natoms=37
// @expect splittable
// @float
__kernel void mdh(__global float *ax, __global float *ay,
                  __global float *az, __global float *charge,
                  __global float *size, __global float *gx,
                  __global float *gy, __global float *gz,
                  __global float *val, float pre1,
                  float xkappa, int natoms)
{
    int igrid = get_global_id(0);
    float v = 0.0f;
    float dx, dy, dz, dist;

    for (int jatom = 0; jatom < natoms; jatom++) {
        dx = gx[igrid] - ax[jatom];
        dy = gy[igrid] - ay[jatom];
        dz = gz[igrid] - az[jatom];
        dist = sqrt(dx * dx + dy * dy + dz * dz);
        v += pre1 * (charge[jatom] / dist)
             * exp(-xkappa * (dist - size[jatom]))
             / (1.0f + xkappa * size[jatom]);
    }
    val[igrid] = v;
}

// Array-of-structures to structure-of-arrays for 4-field records: work-item i
// moves field i % 4 of record i / 4 to soa[(i % 4)*npoints + i / 4]. Division
// and modulo by a constant give quasi-affine subscripts; each slice writes four
// separate runs of soa.
// @run --global 1024 --local 64 --arg aos=rand:1024:1 --arg soa=zeros:1024 --arg npoints=256
// @run --global 1000 --local 8 --arg aos=rand:1000:2 --arg soa=zeros:1000 --arg npoints=250
// @expect splittable
__kernel void aos_to_soa(__global const float *aos, __global float *soa,
                         int npoints)
{
    int i = get_global_id(0);
    if (i < 4 * npoints) {
        int rec = i / 4;
        int field = i % 4;
        soa[field * npoints + rec] = aos[i];
    }
}

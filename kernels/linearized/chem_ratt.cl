// Chemistry-style rate kernel (S3D getrates style): per grid point the
// forward rate constants of 24 reactions (a rational fit of the Arrhenius
// form in the temperature), each stored in its own plane rf[(q-1)*n + gid]
// of one array, and the reverse rates in rb[(q-1)*n + gid]. 48 subscripts
// over a run-time plane size n.
// @run --global 256 --local 32 --arg t=rand:256:1 --arg rf=zeros:6144 --arg rb=zeros:6144 --arg n=256
// @run --global 240 --local 16 --arg t=rand:250:2 --arg rf=zeros:6000 --arg rb=zeros:6000 --arg n=250
// @expect splittable
// @float
__kernel void chem_ratt(__global const float *t, __global float *rf, __global float *rb, int n)
{
    int gid = get_global_id(0);
    if (gid < n) {
        float tk = 300.0f + 1500.0f * t[gid];
        float tinv = 1.0f / tk;
        rf[(1 - 1) * n + gid] = 1.631f * tk * tk / (2842.9f + tk);
        rf[(2 - 1) * n + gid] = 2.811f * tk * tk / (2381.7f + tk);
        rf[(3 - 1) * n + gid] = 1.77f * tk * tk / (2978.2f + tk);
        rf[(4 - 1) * n + gid] = 0.962f * tk * tk / (2608.4f + tk);
        rf[(5 - 1) * n + gid] = 2.075f * tk * tk / (3985.6f + tk);
        rf[(6 - 1) * n + gid] = 0.735f * tk * tk / (1586.7f + tk);
        rf[(7 - 1) * n + gid] = 0.727f * tk * tk / (4067.3f + tk);
        rf[(8 - 1) * n + gid] = 2.234f * tk * tk / (305.2f + tk);
        rf[(9 - 1) * n + gid] = 2.955f * tk * tk / (4827.3f + tk);
        rf[(10 - 1) * n + gid] = 2.135f * tk * tk / (3116.3f + tk);
        rf[(11 - 1) * n + gid] = 0.894f * tk * tk / (173.5f + tk);
        rf[(12 - 1) * n + gid] = 1.821f * tk * tk / (391.8f + tk);
        rf[(13 - 1) * n + gid] = 0.976f * tk * tk / (1285.5f + tk);
        rf[(14 - 1) * n + gid] = 0.575f * tk * tk / (2373.3f + tk);
        rf[(15 - 1) * n + gid] = 1.601f * tk * tk / (4227.9f + tk);
        rf[(16 - 1) * n + gid] = 1.798f * tk * tk / (3237.4f + tk);
        rf[(17 - 1) * n + gid] = 1.749f * tk * tk / (3346.0f + tk);
        rf[(18 - 1) * n + gid] = 1.643f * tk * tk / (1463.0f + tk);
        rf[(19 - 1) * n + gid] = 2.994f * tk * tk / (4978.9f + tk);
        rf[(20 - 1) * n + gid] = 2.601f * tk * tk / (3568.3f + tk);
        rf[(21 - 1) * n + gid] = 1.288f * tk * tk / (1225.4f + tk);
        rf[(22 - 1) * n + gid] = 1.223f * tk * tk / (444.1f + tk);
        rf[(23 - 1) * n + gid] = 2.416f * tk * tk / (2062.0f + tk);
        rf[(24 - 1) * n + gid] = 2.616f * tk * tk / (1993.9f + tk);
        rb[(1 - 1) * n + gid] = rf[(1 - 1) * n + gid] * (479.44f * tinv + 0.5f);
        rb[(2 - 1) * n + gid] = rf[(2 - 1) * n + gid] * (425.18f * tinv + 0.5f);
        rb[(3 - 1) * n + gid] = rf[(3 - 1) * n + gid] * (10.27f * tinv + 0.5f);
        rb[(4 - 1) * n + gid] = rf[(4 - 1) * n + gid] * (112.76f * tinv + 0.5f);
        rb[(5 - 1) * n + gid] = rf[(5 - 1) * n + gid] * (456.03f * tinv + 0.5f);
        rb[(6 - 1) * n + gid] = rf[(6 - 1) * n + gid] * (240.29f * tinv + 0.5f);
        rb[(7 - 1) * n + gid] = rf[(7 - 1) * n + gid] * (490.38f * tinv + 0.5f);
        rb[(8 - 1) * n + gid] = rf[(8 - 1) * n + gid] * (204.74f * tinv + 0.5f);
        rb[(9 - 1) * n + gid] = rf[(9 - 1) * n + gid] * (45.79f * tinv + 0.5f);
        rb[(10 - 1) * n + gid] = rf[(10 - 1) * n + gid] * (318.43f * tinv + 0.5f);
        rb[(11 - 1) * n + gid] = rf[(11 - 1) * n + gid] * (391.47f * tinv + 0.5f);
        rb[(12 - 1) * n + gid] = rf[(12 - 1) * n + gid] * (142.19f * tinv + 0.5f);
        rb[(13 - 1) * n + gid] = rf[(13 - 1) * n + gid] * (52.7f * tinv + 0.5f);
        rb[(14 - 1) * n + gid] = rf[(14 - 1) * n + gid] * (172.97f * tinv + 0.5f);
        rb[(15 - 1) * n + gid] = rf[(15 - 1) * n + gid] * (482.4f * tinv + 0.5f);
        rb[(16 - 1) * n + gid] = rf[(16 - 1) * n + gid] * (381.44f * tinv + 0.5f);
        rb[(17 - 1) * n + gid] = rf[(17 - 1) * n + gid] * (67.82f * tinv + 0.5f);
        rb[(18 - 1) * n + gid] = rf[(18 - 1) * n + gid] * (130.73f * tinv + 0.5f);
        rb[(19 - 1) * n + gid] = rf[(19 - 1) * n + gid] * (59.51f * tinv + 0.5f);
        rb[(20 - 1) * n + gid] = rf[(20 - 1) * n + gid] * (39.35f * tinv + 0.5f);
        rb[(21 - 1) * n + gid] = rf[(21 - 1) * n + gid] * (400.54f * tinv + 0.5f);
        rb[(22 - 1) * n + gid] = rf[(22 - 1) * n + gid] * (97.06f * tinv + 0.5f);
        rb[(23 - 1) * n + gid] = rf[(23 - 1) * n + gid] * (284.05f * tinv + 0.5f);
        rb[(24 - 1) * n + gid] = rf[(24 - 1) * n + gid] * (229.24f * tinv + 0.5f);
    }
}

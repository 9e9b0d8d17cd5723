// Data-dependent while loop (Collatz step count) on uint data, guarded by n.
// The loop touches no array; only start[i] and steps[i] are accessed.
// @run --global 1024 --local 64 --arg start=rand:1024:1 --arg steps=zeros:1024 --arg n=1024
// @run --global 1000 --local 8 --arg start=rand:995:2 --arg steps=zeros:995 --arg n=995
// @expect splittable
__kernel void collatz(__global const uint *start, __global uint *steps, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        uint v = start[i] + 1u;
        uint count = 0u;
        while (v != 1u && count < 10000u) {
            if ((v & 1u) != 0u)
                v = 3u * v + 1u;
            else
                v = v / 2u;
            count++;
        }
        steps[i] = count;
    }
}

// Nested data-dependent ifs writing a char label: -1 below lo, 1 above hi, and
// no write in between (may-writes). label starts as seq so that elements left
// unwritten are visible; buffer sizes keep seq values inside the char range.
// @run --global 128 --local 16 --arg v=rand:120:1 --arg label=seq:120 --arg lo=0.3 --arg hi=0.7 --arg n=120
// @run --global 104 --local 8 --arg v=rand:100:2 --arg label=seq:100 --arg lo=0.5 --arg hi=0.9 --arg n=100
// @expect splittable
__kernel void classify(__global const float *v, __global char *label,
                       float lo, float hi, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        float x = v[i];
        if (x < lo) {
            label[i] = -1;
        } else {
            if (x > hi) {
                label[i] = 1;
            }
        }
    }
}

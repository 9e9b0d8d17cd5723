/* One step of a weighted three-point relaxation: out = the neighbours of
   in weighted by w (shared by every caller), plus t / 1024 (the step). */
__kernel void relax(__global const float *in, __global float *out, __constant float *w, int n, int t)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float left = i > 0 ? in[i - 1] : in[i];
    float right = i < n - 1 ? in[i + 1] : in[i];
    out[i] = w[0] * left + w[1] * in[i] + w[2] * right + (float)t * (1.0f / 1024.0f);
}

// The guarantee: the kernel's name mentioned again in its body (a comment
// and a local variable). The subkernel's rewrite took the name's last
// mention as the kernel's declaration and put the guard's accumulator
// inside the `if` block: every split build failed ("use of undeclared
// identifier '__clpart_bad'"). The declaration is now the last mention
// before the first parameter.
// @run --global 64 --local 8 --arg x=rand:64:1 --arg y=rand:64:2 --arg a=2 --arg n=60
// @run --global 40 --local 8 --arg x=rand:40:3 --arg y=rand:40:4 --arg a=0.5 --arg n=40
// @expect splittable
// @float
__kernel void name_in_body(__global const float *x, __global float *y, float a, int n)
{
    int i = get_global_id(0);
    // name_in_body: a*x plus y, the tail guarded
    if (i < n) {
        float name_in_body = a * x[i];
        y[i] = name_in_body + y[i];
    }
}

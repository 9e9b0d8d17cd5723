// The guarantee: a helper changes the loop's counter through its address
// (`bump(&j)`), so the loop writes every other element. Taken as a counted
// loop, the analysis claimed a[16i .. 16i + n - 1] written and the
// launcher copied the unwritten ones back from the device: a wrong result.
// Now a variable whose address is taken is an unknown value wherever it is
// read and `a` is whole: each device writes a whole copy and the copies
// merge element by element, only the elements a device changed (checked at
// run time for conflicting writes), never an unwritten one.
// @run --global 64 --local 16 --arg a=seq:1024 --arg n=8
// @run --global 32 --local 8 --arg a=seq:512 --arg n=5
// @expect splittable whole=a
void bump(int *p)
{
    *p += 1;
}

__kernel void counter_through_pointer(__global int *a, int n)
{
    int i = get_global_id(0);
    for (int j = 0; j < n; j++) {
        a[i * 16 + j] = 7;
        bump(&j);
    }
}

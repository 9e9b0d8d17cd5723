// The guarantee: a loop whose condition steps its counter too (`j++ < n`
// and `j++`: two steps an iteration) is not a counted loop. Taken as one
// stepping by 1, the analysis claimed every a[16i + 1 .. 16i + n] written
// and the launcher copied the unwritten ones back from the device: a wrong
// result on every split launch. Now `a` is whole: each device writes a whole
// copy and the copies merge element by element, only the elements a device
// changed (checked at run time for conflicting writes).
// @run --global 64 --local 16 --arg a=seq:1024 --arg n=8
// @run --global 32 --local 8 --arg a=seq:512 --arg n=5
// @expect splittable whole=a
__kernel void loop_counter_stepped_twice(__global int *a, int n)
{
    int i = get_global_id(0);
    for (int j = 0; j++ < n; j++)
        a[i * 16 + j] = 7;
}

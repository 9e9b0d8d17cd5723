// Histograms of data that changes between launches: histogram counts the
// values into bins with atomic_inc (its result unused, so each device counts
// into a whole copy of the bins and the copies merge as a sum), then
// rescale maps every value to the next one in place; repeated, the bins
// accumulate over the repetitions while the data stays on the devices.
__kernel void histogram(__global const uint *data, __global uint *bins,
                        uint nbins, int n)
{
    int i = get_global_id(0);
    if (i < n)
        atomic_inc(&bins[data[i] % nbins]);
}

__kernel void rescale(__global uint *data, int n)
{
    int i = get_global_id(0);
    if (i < n)
        data[i] = data[i] * 3u + 1u;
}

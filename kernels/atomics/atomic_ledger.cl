// Per-account ledger with global atomics of the sum family: odd amounts are
// withdrawn (atomic_sub), even ones deposited (atomic_add), every entry
// counted (atomic_inc) and a running 64-bit total kept with atom_add under
// cl_khr_int64_base_atomics (amounts scaled past 32 bits). No atomic's
// result is used: each array merges as the original plus each device's change.
// @run --global 1024 --local 64 --arg amount=rand:1024:1 --arg account=rand:1024:2 --arg balance=rand:32:3 --arg entries=zeros:32 --arg total=zeros:32 --arg naccounts=32 --arg n=1024
// @run --global 1000 --local 8 --arg amount=rand:997:4 --arg account=rand:997:5 --arg balance=zeros:7 --arg entries=rand:7:6 --arg total=rand:7:7 --arg naccounts=7 --arg n=997
// @expect splittable whole=balance,entries,total
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable

__kernel void atomic_ledger(__global const int *amount, __global const int *account,
                            __global int *balance, __global uint *entries,
                            __global long *total, int naccounts, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        int a = amount[i];
        int k = account[i] % naccounts;
        if (a & 1)
            atomic_sub(&balance[k], a);
        else
            atomic_add(&balance[k], a);
        atomic_inc(&entries[k]);
        atom_add(&total[k], (long)a * 65536L * 4096L);
    }
}

// Bit sets with global atomics: atomic_or marks the value seen in a bitmap
// word, atomic_and clears a bit of a mask word, and atomic_xor folds each
// value into a parity word. No result is used: each device updates whole
// copies, merged as the OR and the AND of the copies and as the original
// XOR each device's change.
// @run --global 1024 --local 64 --arg data=rand:1024:1 --arg seen=zeros:32 --arg mask=rand:8:2 --arg parity=zeros:8 --arg n=1024
// @run --global 1000 --local 8 --arg data=rand:1000:3 --arg seen=rand:32:4 --arg mask=zeros:8 --arg parity=rand:8:5 --arg n=1000
// @expect splittable whole=seen,mask,parity
__kernel void atomic_bitmask(__global const uint *data, __global uint *seen,
                             __global uint *mask, __global uint *parity, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        uint v = data[i];
        atomic_or(&seen[v / 32 % 32], 1u << (v % 32));
        atomic_and(&mask[i % 8], ~(1u << (v % 32)) | 0xf0000000u);
        atomic_xor(&parity[v % 8], v * 2654435761u);
    }
}

// A buffer of 12-byte structs, sized by OpenCL C's layout (12
// bytes an element; it used to be 0 in the argument info and 1 in the
// ranges, so `p=zeros:64` made 64 bytes for a kernel touching 768). Since
// members are analyzed, a member access is to part of the element: the kernel
// splits, the partial writes glued element by element.
// @run --global 64 --local 16 --arg p=zeros:64 --arg d=1.5
// @expect splittable
typedef struct { float x, y, z; } point;

__kernel void struct_buffer(__global point *p, float d)
{
    int i = get_global_id(0);
    p[i].x += d;
}

// Members of buffers of structs (566 places in 9 files of the
// public suites), nested members included. Each access touches part of an
// element: reads and may-writes of that element, glued element by element.
// @run --global 256 --local 32 --arg bodies=zeros:256 --arg v=rand:257:1 --arg dt=0.5
// @run --global 96 --local 16 --arg bodies=zeros:96 --arg v=rand:97:2 --arg dt=2.0
// @expect splittable
typedef struct { float x, y, z; } vec3;
typedef struct { vec3 pos; vec3 vel; int tag; } body;

__kernel void struct_members(__global body *bodies, __global const float *v, float dt)
{
    int i = get_global_id(0);
    bodies[i].vel.x = v[i + 1] - v[i];
    bodies[i].vel.y = v[i] * 2.0f;
    bodies[i].pos.x += dt * bodies[i].vel.x;
    bodies[i].pos.y += dt * bodies[i].vel.y;
    bodies[i].tag = i;
}

/* clpart_coarsen.h: support header for C coarsened by clpart from OpenCL C.
 * C11 with GCC extensions (vector_size, statement expressions, __typeof__). */
#ifndef CLPART_COARSEN_H
#define CLPART_COARSEN_H
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <math.h>

/* One work-group's view of the NDRange. */
typedef struct clpart_wg {
    unsigned work_dim;
    size_t global_size[3];
    size_t local_size[3];
    size_t num_groups[3];
    size_t global_offset[3];
    size_t group_id[3];
} clpart_wg;

typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;

#define CLPART_VEC(T, N, B) typedef T T##N __attribute__((vector_size((N) * (B))));
#define CLPART_VECS(T, B) CLPART_VEC(T, 2, B) typedef T T##3 __attribute__((vector_size(4 * (B)))); \
    CLPART_VEC(T, 4, B) CLPART_VEC(T, 8, B) CLPART_VEC(T, 16, B)
CLPART_VECS(char, 1)
CLPART_VECS(uchar, 1)
CLPART_VECS(short, 2)
CLPART_VECS(ushort, 2)
CLPART_VECS(int, 4)
CLPART_VECS(uint, 4)
CLPART_VECS(long, 8)
CLPART_VECS(ulong, 8)
CLPART_VECS(float, 4)
CLPART_VECS(double, 8)

/* Work-item builtins with a run-time dimension argument. */
static inline size_t clpart_dim_ok(const clpart_wg *wg, size_t d) { return d < wg->work_dim; }
static inline size_t clpart_get_local_id(const clpart_wg *wg, size_t d, size_t l0, size_t l1, size_t l2) {
    return !clpart_dim_ok(wg, d) ? 0 : d == 0 ? l0 : d == 1 ? l1 : l2;
}
static inline size_t clpart_get_group_id(const clpart_wg *wg, size_t d, size_t l0, size_t l1, size_t l2) {
    (void)l0; (void)l1; (void)l2; return clpart_dim_ok(wg, d) ? wg->group_id[d] : 0;
}
static inline size_t clpart_get_global_id(const clpart_wg *wg, size_t d, size_t l0, size_t l1, size_t l2) {
    return clpart_dim_ok(wg, d) ? wg->group_id[d] * wg->local_size[d] + clpart_get_local_id(wg, d, l0, l1, l2) + wg->global_offset[d] : 0;
}
static inline size_t clpart_get_global_size(const clpart_wg *wg, size_t d, size_t l0, size_t l1, size_t l2) {
    (void)l0; (void)l1; (void)l2; return clpart_dim_ok(wg, d) ? wg->global_size[d] : 1;
}
static inline size_t clpart_get_local_size(const clpart_wg *wg, size_t d, size_t l0, size_t l1, size_t l2) {
    (void)l0; (void)l1; (void)l2; return clpart_dim_ok(wg, d) ? wg->local_size[d] : 1;
}
static inline size_t clpart_get_num_groups(const clpart_wg *wg, size_t d, size_t l0, size_t l1, size_t l2) {
    (void)l0; (void)l1; (void)l2; return clpart_dim_ok(wg, d) ? wg->num_groups[d] : 1;
}
static inline size_t clpart_get_global_offset(const clpart_wg *wg, size_t d, size_t l0, size_t l1, size_t l2) {
    (void)l0; (void)l1; (void)l2; return clpart_dim_ok(wg, d) ? wg->global_offset[d] : 0;
}

/* Math builtins not in C. */
static inline float clpart_rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double clpart_rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float clpart_exp10f(float x) { return powf(10.0f, x); }
static inline double clpart_exp10(double x) { return pow(10.0, x); }

/* Type-generic integer and common builtins (GCC statement expressions). */
#define clpart_min(a, b) ({ __typeof__((a) + (b)) _a = (a), _b = (b); _b < _a ? _b : _a; })
#define clpart_max(a, b) ({ __typeof__((a) + (b)) _a = (a), _b = (b); _a < _b ? _b : _a; })
#define clpart_clamp(x, lo, hi) clpart_min(clpart_max((x), (lo)), (hi))
#define clpart_abs(x) ({ __typeof__(x) _x = (x); _x < 0 ? -_x : _x; })
#define clpart_mad(a, b, c) ((a) * (b) + (c))
#define clpart_fma(a, b, c) _Generic((a), float: fmaf, default: fma)((a), (b), (c))
#define clpart_mix(x, y, a) ((x) + ((y) - (x)) * (a))
#define clpart_sign(x) ({ __typeof__(x) _x = (x); _x > 0 ? (__typeof__(x))1 : _x < 0 ? (__typeof__(x))-1 : (__typeof__(x))0; })
#define clpart_mul24(a, b) ((a) * (b))
#define clpart_mad24(a, b, c) ((a) * (b) + (c))
#define clpart_select(a, b, c) ((c) ? (b) : (a))
#define clpart_popcount(x) ((__typeof__(x))__builtin_popcountll((unsigned long long)(x)))
#define clpart_step(edge, x) ((x) < (edge) ? 0.0f : 1.0f)
#define clpart_degrees(x) ((x) * (180.0f / 3.14159265358979323846f))
#define clpart_radians(x) ((x) * (3.14159265358979323846f / 180.0f))
#define clpart_isnan(x) isnan(x)
#define clpart_isinf(x) isinf(x)
#define clpart_isfinite(x) isfinite(x)
#define clpart_mem_fence(f) ((void)(f))
#define clpart_read_mem_fence(f) ((void)(f))
#define clpart_write_mem_fence(f) ((void)(f))
#define CLK_LOCAL_MEM_FENCE 1
#define CLK_GLOBAL_MEM_FENCE 2

/* Atomics: the coarsened C runs one work-item at a time, so plain updates. */
#define clpart_atomic_op(p, expr) ({ __typeof__(p) _p = (p); __typeof__(*_p) _old = *_p; *_p = (expr); _old; })
#define clpart_atomic_inc(p) clpart_atomic_op(p, _old + 1)
#define clpart_atomic_dec(p) clpart_atomic_op(p, _old - 1)
#define clpart_atom_inc(p) clpart_atomic_inc(p)
#define clpart_atomic_add(p, v) clpart_atomic_op(p, _old + (v))
#define clpart_atom_add(p, v) clpart_atomic_add(p, v)
#define clpart_atomic_sub(p, v) clpart_atomic_op(p, _old - (v))
#define clpart_atomic_xchg(p, v) clpart_atomic_op(p, (v))
#define clpart_atomic_min(p, v) clpart_atomic_op(p, clpart_min(_old, (v)))
#define clpart_atomic_max(p, v) clpart_atomic_op(p, clpart_max(_old, (v)))
#define clpart_atomic_and(p, v) clpart_atomic_op(p, _old & (v))
#define clpart_atomic_or(p, v) clpart_atomic_op(p, _old | (v))
#define clpart_atomic_xor(p, v) clpart_atomic_op(p, _old ^ (v))
#define clpart_atomic_cmpxchg(p, c, v) clpart_atomic_op(p, _old == (c) ? (v) : _old)

/* Geometric builtins on scalars. */
#define clpart_dot(a, b) ((a) * (b))
#define clpart_length(a) fabsf(a)
#define clpart_distance(a, b) fabsf((a) - (b))

/* Access tracing (tests): with CLPART_TRACE defined, every subscript of a
 * global or constant pointer reports (address, element size, 0 read / 1 write /
 * 2 read-write) to clpart_trace(), which the test driver provides. */
#ifdef CLPART_TRACE
long clpart_trace(const void *p, long idx, size_t size, int mode);
#define CLPART_T(p, i, w) clpart_trace((p), (long)(i), sizeof(*(p)), (w))
#else
#define CLPART_T(p, i, w) (i)
#endif

/* vloadN / vstoreN. */
#define CLPART_VLOAD(VT, N, off, p) ({ VT _v; size_t _o = (size_t)(off) * (N); \
    for (int _k = 0; _k < (N); _k++) { _v[_k] = (p)[CLPART_T(p, _o + _k, 0)]; } _v; })
#define CLPART_VSTORE(N, v, off, p) ({ __typeof__(v) _v = (v); size_t _o = (size_t)(off) * (N); \
    for (int _k = 0; _k < (N); _k++) { (p)[CLPART_T(p, _o + _k, 1)] = _v[_k]; } (void)0; })
/* as_type reinterpretation. */
#define CLPART_AS(T, x) ({ __typeof__(x) _x = (x); T _t; memcpy(&_t, &_x, sizeof _t); _t; })

#endif

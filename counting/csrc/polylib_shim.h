/* Exception-safe entry points into PolyLib for the counting crate.
 *
 * PolyLib reports arithmetic overflow and some internal errors by
 * THROW (longjmp); without a matching CATCH it aborts the process. Each
 * wrapper installs a CATCH so that a throw becomes a status code instead.
 * No Rust frame lies between the CATCH and the throw, so the longjmp only
 * unwinds C frames.
 *
 * Every wrapper returns 0 on success and 1 when PolyLib threw; on a throw
 * *out is NULL (whatever PolyLib had allocated so far is leaked). */
#ifndef CLPART_POLYLIB_SHIM_H
#define CLPART_POLYLIB_SHIM_H

#include <polylib/polylib64.h>

int clpart_constraints2polyhedron(Matrix *constraints, unsigned max_rays,
                                  Polyhedron **out);
int clpart_universe_polyhedron(unsigned dimension, Polyhedron **out);
int clpart_polyhedron_enumerate(Polyhedron *p, Polyhedron *context,
                                unsigned max_rays, const char **param_names,
                                Enumeration **out);
int clpart_polyhedron2param_vertices(Polyhedron *p, Polyhedron *context,
                                     unsigned max_rays,
                                     Param_Polyhedron **out);

#endif

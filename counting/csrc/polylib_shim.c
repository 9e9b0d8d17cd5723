/* See polylib_shim.h. */
#include "polylib_shim.h"

int clpart_constraints2polyhedron(Matrix *constraints, unsigned max_rays,
                                  Polyhedron **out) {
  *out = NULL;
  CATCH(any_exception_error) { return 1; }
  TRY {
    *out = Constraints2Polyhedron(constraints, max_rays);
    UNCATCH(any_exception_error);
  }
  return 0;
}

int clpart_universe_polyhedron(unsigned dimension, Polyhedron **out) {
  *out = NULL;
  CATCH(any_exception_error) { return 1; }
  TRY {
    *out = Universe_Polyhedron(dimension);
    UNCATCH(any_exception_error);
  }
  return 0;
}

int clpart_polyhedron_enumerate(Polyhedron *p, Polyhedron *context,
                                unsigned max_rays, const char **param_names,
                                Enumeration **out) {
  *out = NULL;
  CATCH(any_exception_error) { return 1; }
  TRY {
    *out = Polyhedron_Enumerate(p, context, max_rays, param_names);
    UNCATCH(any_exception_error);
  }
  return 0;
}

int clpart_polyhedron2param_vertices(Polyhedron *p, Polyhedron *context,
                                     unsigned max_rays,
                                     Param_Polyhedron **out) {
  *out = NULL;
  CATCH(any_exception_error) { return 1; }
  TRY {
    *out = Polyhedron2Param_Vertices(p, context, max_rays);
    UNCATCH(any_exception_error);
  }
  return 0;
}

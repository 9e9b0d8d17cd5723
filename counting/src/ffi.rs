//! Raw PolyLib bindings (bindgen, see `build.rs`) and owning handles.
//!
//! Every PolyLib object that this module hands out is wrapped in a type whose
//! `Drop` frees it with the matching PolyLib function. Calls that may THROW go
//! through the C wrappers of `csrc/polylib_shim.c`, which turn a throw into a
//! status code. All of this runs in the sandboxed child process (see `sandbox`).

#![allow(
    non_upper_case_globals,
    non_camel_case_types,
    non_snake_case,
    dead_code,
    unsafe_op_in_unsafe_fn,
    clippy::all
)]

include!(concat!(env!("OUT_DIR"), "/polylib_bindings.rs"));

use super::EhrhartError;

/// Working space (maximum number of rays) handed to PolyLib.
pub const MAX_RAYS: u32 = 4096;

/// An owned PolyLib `Matrix`.
pub struct OwnedMatrix(*mut Matrix);

impl OwnedMatrix {
    /// Builds a matrix from rows of equal length.
    pub fn from_rows(rows: &[Vec<i64>], n_cols: usize) -> Result<Self, EhrhartError> {
        let n_rows = u32::try_from(rows.len()).map_err(|_| EhrhartError::TooLarge {
            what: "constraint count".into(),
            limit: u32::MAX as usize,
        })?;
        let n_cols_u = u32::try_from(n_cols).map_err(|_| EhrhartError::TooLarge {
            what: "column count".into(),
            limit: u32::MAX as usize,
        })?;
        // SAFETY: Matrix_Alloc returns NULL or a matrix of n_rows x n_cols values.
        let m = unsafe { Matrix_Alloc(n_rows, n_cols_u) };
        if m.is_null() {
            return Err(EhrhartError::PolyLib {
                detail: "Matrix_Alloc failed".into(),
            });
        }
        let owned = OwnedMatrix(m);
        for (r, row) in rows.iter().enumerate() {
            debug_assert_eq!(row.len(), n_cols);
            for (c, &v) in row.iter().enumerate().take(n_cols) {
                // SAFETY: r < NbRows and c < NbColumns; p[r] points to NbColumns values.
                unsafe { *(*(*m).p.add(r)).add(c) = v };
            }
        }
        Ok(owned)
    }

    pub fn as_ptr(&self) -> *mut Matrix {
        self.0
    }
}

impl Drop for OwnedMatrix {
    fn drop(&mut self) {
        // SAFETY: the pointer came from Matrix_Alloc and is freed once.
        unsafe { Matrix_Free(self.0) }
    }
}

/// An owned PolyLib `Polyhedron` (a single polyhedron, or a domain list).
pub struct OwnedPolyhedron(*mut Polyhedron);

impl OwnedPolyhedron {
    /// `Constraints2Polyhedron`, through the exception-safe wrapper.
    pub fn from_constraints(m: &OwnedMatrix) -> Result<Self, EhrhartError> {
        let mut out = std::ptr::null_mut();
        // SAFETY: m is a valid matrix; out receives NULL or a new polyhedron.
        let rc = unsafe { clpart_constraints2polyhedron(m.as_ptr(), MAX_RAYS, &mut out) };
        Self::checked(rc, out, "Constraints2Polyhedron")
    }

    /// `Universe_Polyhedron`, through the exception-safe wrapper.
    pub fn universe(dimension: usize) -> Result<Self, EhrhartError> {
        let mut out = std::ptr::null_mut();
        let dim = u32::try_from(dimension).unwrap_or(u32::MAX);
        // SAFETY: out receives NULL or a new polyhedron.
        let rc = unsafe { clpart_universe_polyhedron(dim, &mut out) };
        Self::checked(rc, out, "Universe_Polyhedron")
    }

    fn checked(rc: i32, out: *mut Polyhedron, call: &'static str) -> Result<Self, EhrhartError> {
        if rc != 0 {
            return Err(EhrhartError::PolyLib {
                detail: format!("{call} threw an exception (arithmetic overflow?)"),
            });
        }
        if out.is_null() {
            return Err(EhrhartError::PolyLib {
                detail: format!("{call} returned null"),
            });
        }
        Ok(OwnedPolyhedron(out))
    }

    pub fn as_ptr(&self) -> *mut Polyhedron {
        self.0
    }

    /// The polyhedron's dimension, rays and lines as rows
    /// `[line(0)/ray-or-vertex(1), coordinates..., 0 for a ray or line / 1 for a vertex]`.
    pub fn rays(&self) -> (usize, Vec<Vec<i64>>) {
        // SAFETY: self.0 is a valid polyhedron; Ray has NbRays rows of Dimension + 2 values.
        unsafe {
            let p = &*self.0;
            let dim = p.Dimension as usize;
            let rows = (0..p.NbRays as usize)
                .map(|r| std::slice::from_raw_parts(*p.Ray.add(r), dim + 2).to_vec())
                .collect();
            (dim, rows)
        }
    }
}

impl Drop for OwnedPolyhedron {
    fn drop(&mut self) {
        // SAFETY: the pointer came from PolyLib and is freed once (with the
        // rest of its domain list, if any).
        unsafe { Domain_Free(self.0) }
    }
}

/// Reads the constraints of a PolyLib polyhedron as rows
/// `[eq(0)/ineq(1), coefficients..., constant]`.
///
/// # Safety
/// `p` must point to a valid polyhedron.
pub unsafe fn polyhedron_constraints(p: *const Polyhedron) -> Vec<Vec<i64>> {
    let p = &*p;
    let n_cols = p.Dimension as usize + 2;
    (0..p.NbConstraints as usize)
        .map(|r| std::slice::from_raw_parts(*p.Constraint.add(r), n_cols).to_vec())
        .collect()
}

/// Reads a PolyLib matrix as rows.
///
/// # Safety
/// `m` must point to a valid matrix.
pub unsafe fn matrix_rows(m: *const Matrix) -> Vec<Vec<i64>> {
    let m = &*m;
    let n_cols = m.NbColumns as usize;
    (0..m.NbRows as usize)
        .map(|r| std::slice::from_raw_parts(*m.p.add(r), n_cols).to_vec())
        .collect()
}

/// An owned result list of `Polyhedron_Enumerate`.
pub struct OwnedEnumeration(*mut Enumeration);

impl OwnedEnumeration {
    /// `Polyhedron_Enumerate`, through the exception-safe wrapper.
    /// `param_names` must hold one C string per parameter.
    pub fn enumerate(
        p: &OwnedPolyhedron,
        context: &OwnedPolyhedron,
        param_names: &[std::ffi::CString],
    ) -> Result<Self, EhrhartError> {
        let mut names: Vec<*const std::os::raw::c_char> =
            param_names.iter().map(|n| n.as_ptr()).collect();
        names.push(std::ptr::null());
        let mut out = std::ptr::null_mut();
        // SAFETY: p and context are valid polyhedra; names outlives the call.
        let rc = unsafe {
            clpart_polyhedron_enumerate(
                p.as_ptr(),
                context.as_ptr(),
                MAX_RAYS,
                names.as_mut_ptr(),
                &mut out,
            )
        };
        if rc != 0 {
            return Err(EhrhartError::PolyLib {
                detail: "Polyhedron_Enumerate threw an exception (arithmetic overflow?)".into(),
            });
        }
        // A NULL list is legal: no validity domain, i.e. the set is empty.
        Ok(OwnedEnumeration(out))
    }

    /// The nodes of the list, in order.
    pub fn nodes(&self) -> Vec<*const Enumeration> {
        let mut v = Vec::new();
        let mut e = self.0 as *const Enumeration;
        while !e.is_null() {
            v.push(e);
            // SAFETY: e is a valid node of the list.
            e = unsafe { (*e).next };
        }
        v
    }
}

impl Drop for OwnedEnumeration {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: the list came from Polyhedron_Enumerate and is freed once.
            unsafe { Enumeration_Free(self.0) }
        }
    }
}

/// An owned result of `Polyhedron2Param_Vertices`.
pub struct OwnedParamPolyhedron(*mut Param_Polyhedron);

impl OwnedParamPolyhedron {
    /// `Polyhedron2Param_Vertices`, through the exception-safe wrapper.
    pub fn vertices_of(
        p: &OwnedPolyhedron,
        context: &OwnedPolyhedron,
    ) -> Result<Self, EhrhartError> {
        let mut out = std::ptr::null_mut();
        // SAFETY: p and context are valid polyhedra.
        let rc = unsafe {
            clpart_polyhedron2param_vertices(p.as_ptr(), context.as_ptr(), MAX_RAYS, &mut out)
        };
        if rc != 0 {
            return Err(EhrhartError::PolyLib {
                detail: "Polyhedron2Param_Vertices threw an exception (arithmetic overflow?)"
                    .into(),
            });
        }
        Ok(OwnedParamPolyhedron(out))
    }

    /// Each vertex as (rows of `[param coefficients..., constant, denominator]`
    /// per coordinate, validity-domain rows `[eq/ineq, param coefficients..., constant]`).
    pub fn vertices(&self) -> Vec<(Vec<Vec<i64>>, Vec<Vec<i64>>)> {
        let mut out = Vec::new();
        if self.0.is_null() {
            return out;
        }
        // SAFETY: self.0 is a valid Param_Polyhedron; its V list has nbV nodes.
        unsafe {
            let pp = &*self.0;
            let mut v = pp.V;
            let mut i = 0;
            while !v.is_null() && i < pp.nbV {
                let node = &*v;
                let coords = if node.Vertex.is_null() {
                    Vec::new()
                } else {
                    matrix_rows(node.Vertex)
                };
                let domain = if node.Domain.is_null() {
                    Vec::new()
                } else {
                    matrix_rows(node.Domain)
                };
                out.push((coords, domain));
                v = node.next;
                i += 1;
            }
        }
        out
    }
}

impl Drop for OwnedParamPolyhedron {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: the pointer came from Polyhedron2Param_Vertices and is freed once.
            unsafe { Param_Polyhedron_Free(self.0) }
        }
    }
}

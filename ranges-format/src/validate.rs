//! Consistency checks of a range file: every field against the others and
//! against the kernel's signature recorded in the file. A range file is
//! untrusted input: a launcher that loads one copies data by its element
//! sizes and ranges and builds the kernel code it carries, so nothing in it
//! is taken for granted.

use crate::expr::{BoundCondition, BoundExpr, Condition, PwExpr};
use crate::file::{
    ArgInfo, ArgKind, ArrayRanges, ArrayStatus, BoundCount, BoundRange, ExtraArgMeaning,
    KernelRanges, Mode, ParamSource, RangeFile,
};
use crate::{ExprError, RangesError};

/// What an OpenCL C type name says about its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeInfo {
    /// Size in bytes (3-vectors are sized as 4-vectors).
    pub size: u32,
    /// Lanes, 1 for scalars.
    pub lanes: u32,
    /// An integer scalar or vector.
    pub integer: bool,
}

fn scalar(name: &str) -> Option<(u32, bool)> {
    Some(match name {
        "char" | "signed char" | "int8_t" | "uchar" | "unsigned char" | "uint8_t" | "bool" => {
            (1, true)
        }
        "short" | "int16_t" | "ushort" | "unsigned short" | "uint16_t" => (2, true),
        "int" | "int32_t" | "uint" | "unsigned int" | "unsigned" | "uint32_t" => (4, true),
        "long" | "int64_t" | "ulong" | "unsigned long" | "uint64_t" => (8, true),
        "half" => (2, false),
        "float" => (4, false),
        "double" => (8, false),
        _ => return None,
    })
}

/// The size and kind of an OpenCL C scalar or vector type name (`float`,
/// `uint`, `float4`, `char3`, with an optional `const `); `None` for structs
/// and names this crate does not know.
pub fn opencl_type(name: &str) -> Option<TypeInfo> {
    let clean = name
        .trim()
        .trim_start_matches("const ")
        .trim_start_matches("__global ")
        .trim();
    if let Some((size, integer)) = scalar(clean) {
        return Some(TypeInfo {
            size,
            lanes: 1,
            integer,
        });
    }
    for lanes in [16u32, 8, 4, 3, 2] {
        if let Some(base) = clean.strip_suffix(lanes.to_string().as_str()) {
            if let Some((size, integer)) = scalar(base) {
                let storage = if lanes == 3 { 4 } else { lanes };
                return Some(TypeInfo {
                    size: size * storage,
                    lanes,
                    integer,
                });
            }
        }
    }
    None
}

/// `elem_type`/`elem_size` of an argument or array: a known type has its
/// OpenCL C size, any other a nonzero size.
fn check_elem(elem_type: &str, elem_size: u32) -> Result<(), String> {
    match opencl_type(elem_type) {
        Some(t) if t.size != elem_size => Err(format!(
            "elem_size {elem_size} does not match element type '{elem_type}' ({} bytes)",
            t.size
        )),
        None if elem_size == 0 => Err(format!(
            "elem_size 0 is not a valid size for element type '{elem_type}'"
        )),
        _ => Ok(()),
    }
}

/// A kernel's signature: each argument at its index, named by a unique
/// identifier, with a valid element type and size.
pub(crate) fn validate_args(args: &[ArgInfo]) -> Result<(), String> {
    for (i, a) in args.iter().enumerate() {
        let what = format!("args[{i}]");
        if a.index as usize != i {
            return Err(format!("{what}: index {} is not its position {i}", a.index));
        }
        if !is_ident(&a.name) {
            return Err(format!(
                "{what}: name '{}' is not an opencl c identifier",
                a.name.escape_debug()
            ));
        }
        if args[..i].iter().any(|o| o.name == a.name) {
            return Err(format!("argument '{}' is listed twice", a.name));
        }
        check_elem(&a.elem_type, a.elem_size).map_err(|m| format!("argument '{}': {m}", a.name))?;
    }
    Ok(())
}

pub(crate) fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

fn is_buffer(a: &ArgInfo) -> bool {
    matches!(a.kind, ArgKind::GlobalBuffer | ArgKind::ConstantBuffer)
}

impl RangeFile {
    /// Checks the whole file: `source_hash` is the hash of `source`, kernel
    /// names are unique, and every kernel entry is consistent (see
    /// [`KernelRanges::validate`]).
    pub fn validate(&self) -> Result<(), RangesError> {
        let want = crate::source_hash(&self.source);
        if self.source_hash != want {
            return Err(RangesError::File {
                field: "source_hash".into(),
                message: format!(
                    "'{}' is not the sha-256 of source ('{want}'): the source was edited",
                    self.source_hash
                ),
            });
        }
        for (i, o) in self.build_options.iter().enumerate() {
            if o.contains('\0') {
                return Err(RangesError::File {
                    field: format!("build_options[{i}]"),
                    message: "contains a nul byte".into(),
                });
            }
        }
        if self.source.contains('\0') {
            return Err(RangesError::File {
                field: "source".into(),
                message: "contains a nul byte".into(),
            });
        }
        for (i, k) in self.kernels.iter().enumerate() {
            if self.format_version < 3 {
                if let Some(a) = k.arrays.iter().find(|a| a.boxes.is_some()) {
                    return Err(RangesError::Invalid {
                        kernel: k.name.clone(),
                        message: format!(
                            "array '{}': boxes in a file of format_version {} (boxes came with version 3)",
                            a.name, self.format_version
                        ),
                    });
                }
            }
            if self.kernels[..i].iter().any(|o| o.name == k.name) {
                return Err(RangesError::Invalid {
                    kernel: k.name.clone(),
                    message: "the kernel is listed twice".into(),
                });
            }
            k.validate()?;
        }
        Ok(())
    }
}

impl KernelRanges {
    /// Checks every field of the entry against the others and against the
    /// kernel's signature (`args`): names, `work_dim` and `split_dim`,
    /// parameter sources, element types and sizes, array argument indices,
    /// subkernel extra arguments and guard lists; then that every expression
    /// parses and binds to the kernel's parameters.
    pub fn validate(&self) -> Result<(), RangesError> {
        self.validate_fields()
            .map_err(|message| RangesError::Invalid {
                kernel: self.name.clone(),
                message,
            })?;
        self.validate_expressions()
    }

    fn validate_fields(&self) -> Result<(), String> {
        if !is_ident(&self.name) {
            return Err(format!(
                "name '{}' is not an opencl c identifier",
                self.name.escape_debug()
            ));
        }
        if !(1..=3).contains(&self.work_dim) {
            return Err(format!("work_dim {} is not 1, 2 or 3", self.work_dim));
        }
        if let Some(d) = self.split_dim {
            if d >= self.work_dim {
                return Err(format!(
                    "split_dim {d} is not below work_dim {}",
                    self.work_dim
                ));
            }
        }

        // arguments: the kernel's signature
        validate_args(&self.args)?;
        let arg = |index: u32| self.args.get(index as usize);
        let buffer_arg = |what: &str, index: u32| -> Result<&ArgInfo, String> {
            match arg(index) {
                None => Err(format!(
                    "{what} refers to argument {index}, which does not exist ({} arguments)",
                    self.args.len()
                )),
                Some(a) if !is_buffer(a) => Err(format!(
                    "{what} refers to argument '{}', which is not a global or constant buffer",
                    a.name
                )),
                Some(a) => Ok(a),
            }
        };

        // parameters
        let names = self.param_names();
        for (i, p) in self.params.iter().enumerate() {
            if !is_ident(&p.name) {
                return Err(format!(
                    "params[{i}]: name '{}' is not an identifier",
                    p.name.escape_debug()
                ));
            }
            if names[..i].contains(&p.name.as_str()) {
                return Err(format!("parameter '{}' is listed twice", p.name));
            }
            match p.source {
                ParamSource::ScalarArg { arg_index } => {
                    let Some(a) = arg(arg_index) else {
                        return Err(format!(
                            "parameter '{}' refers to argument {arg_index}, which does not exist",
                            p.name
                        ));
                    };
                    let integer =
                        opencl_type(&a.elem_type).is_some_and(|t| t.integer && t.lanes == 1);
                    if a.kind != ArgKind::Scalar || !integer {
                        return Err(format!(
                            "parameter '{}' refers to argument '{}', which is not an integer scalar",
                            p.name, a.name
                        ));
                    }
                }
                ParamSource::StructMember {
                    arg_index,
                    offset,
                    size,
                    ..
                } => {
                    let Some(a) = arg(arg_index) else {
                        return Err(format!(
                            "parameter '{}' refers to argument {arg_index}, which does not exist",
                            p.name
                        ));
                    };
                    if a.kind != ArgKind::Scalar {
                        return Err(format!(
                            "parameter '{}' refers to argument '{}', which is not passed by value",
                            p.name, a.name
                        ));
                    }
                    if ![1, 2, 4, 8].contains(&size)
                        || u64::from(offset) + u64::from(size) > u64::from(a.elem_size)
                    {
                        return Err(format!(
                            "parameter '{}' is {size} bytes at byte {offset} of argument '{}', which has {} bytes",
                            p.name, a.name, a.elem_size
                        ));
                    }
                }
                ParamSource::GlobalSize(d)
                | ParamSource::LocalSize(d)
                | ParamSource::GlobalOffset(d)
                | ParamSource::NumGroups(d) => {
                    if d >= self.work_dim {
                        return Err(format!(
                            "parameter '{}' refers to dimension {d}, not below work_dim {}",
                            p.name, self.work_dim
                        ));
                    }
                }
                ParamSource::SliceLo
                | ParamSource::SliceHi
                | ParamSource::SliceLoItem
                | ParamSource::SliceHiItem => {
                    if self.split_dim.is_none() {
                        return Err(format!(
                            "parameter '{}' is a slice bound but the kernel has no split_dim",
                            p.name
                        ));
                    }
                }
            }
        }

        // arrays
        for (i, a) in self.arrays.iter().enumerate() {
            let info = buffer_arg(&format!("array '{}'", a.name), a.arg_index)?;
            self.validate_array(a, info)?;
            if self.arrays[..i].iter().any(|o| o.arg_index == a.arg_index) {
                return Err(format!(
                    "argument {} ('{}') has two array entries",
                    a.arg_index, info.name
                ));
            }
        }

        // subkernel
        if let Some(sub) = &self.subkernel {
            if !is_ident(&sub.name) {
                return Err(format!(
                    "subkernel: name '{}' is not an opencl c identifier",
                    sub.name.escape_debug()
                ));
            }
            if sub.source.contains('\0') {
                return Err("subkernel: source contains a nul byte".into());
            }
            let mut flags = 0;
            for (i, e) in sub.extra_args.iter().enumerate() {
                let what = format!("subkernel extra argument '{}'", e.name);
                if !is_ident(&e.name) {
                    return Err(format!(
                        "subkernel: extra_args[{i}]: name '{}' is not an identifier",
                        e.name.escape_debug()
                    ));
                }
                if sub.extra_args[..i].iter().any(|o| o.name == e.name)
                    || self.args.iter().any(|a| a.name == e.name)
                {
                    return Err(format!("{what} repeats the name of another argument"));
                }
                match e.meaning {
                    ExtraArgMeaning::ArrayBase { arg_index }
                    | ExtraArgMeaning::ReadLo { arg_index }
                    | ExtraArgMeaning::ReadHi { arg_index }
                    | ExtraArgMeaning::WriteLo { arg_index }
                    | ExtraArgMeaning::WriteHi { arg_index }
                    | ExtraArgMeaning::Extent { arg_index } => {
                        // `__local` arguments are guarded too (no array entry).
                        if arg(arg_index).is_some_and(|a| a.kind == ArgKind::LocalBuffer) {
                            continue;
                        }
                        let info = buffer_arg(&what, arg_index)?;
                        if !self.arrays.iter().any(|a| a.arg_index == arg_index) {
                            return Err(format!(
                                "{what} refers to argument '{}', which has no array entry",
                                info.name
                            ));
                        }
                    }
                    ExtraArgMeaning::GroupIdBase(d)
                    | ExtraArgMeaning::GlobalSize(d)
                    | ExtraArgMeaning::NumGroups(d)
                    | ExtraArgMeaning::GlobalOffset(d) => {
                        if d >= self.work_dim {
                            return Err(format!(
                                "{what} refers to dimension {d}, not below work_dim {}",
                                self.work_dim
                            ));
                        }
                    }
                    ExtraArgMeaning::GuardFlags => {
                        flags += 1;
                        if flags > 1 {
                            return Err(format!("{what}: the guard flag buffer is listed twice"));
                        }
                    }
                    ExtraArgMeaning::BoxPartLo {
                        arg_index,
                        part,
                        dim,
                    }
                    | ExtraArgMeaning::BoxPartHi {
                        arg_index,
                        part,
                        dim,
                    } => {
                        let info = buffer_arg(&what, arg_index)?;
                        let Some(b) = self
                            .arrays
                            .iter()
                            .find(|a| a.arg_index == arg_index)
                            .and_then(|a| a.boxes.as_ref())
                        else {
                            return Err(format!(
                                "{what} is a read-part check of argument '{}', which has no boxes",
                                info.name
                            ));
                        };
                        if part as usize >= b.read_parts.len() {
                            return Err(format!(
                                "{what} refers to read part {part} of argument '{}', which has {}",
                                info.name,
                                b.read_parts.len()
                            ));
                        }
                        if dim as usize >= b.strides.len() {
                            return Err(format!(
                                "{what} refers to box dimension {dim} of argument '{}', not in 0..{}",
                                info.name,
                                b.strides.len()
                            ));
                        }
                        if !sub.guarded.contains(&arg_index) {
                            return Err(format!(
                                "{what} is a read-part check of argument '{}', which the subkernel does not guard",
                                info.name
                            ));
                        }
                    }
                    ExtraArgMeaning::BoxStride { arg_index, dim }
                    | ExtraArgMeaning::BoxExtent { arg_index, dim }
                    | ExtraArgMeaning::BoxReadLo { arg_index, dim }
                    | ExtraArgMeaning::BoxReadHi { arg_index, dim }
                    | ExtraArgMeaning::BoxWriteLo { arg_index, dim }
                    | ExtraArgMeaning::BoxWriteHi { arg_index, dim } => {
                        let info = buffer_arg(&what, arg_index)?;
                        let Some(b) = self
                            .arrays
                            .iter()
                            .find(|a| a.arg_index == arg_index)
                            .and_then(|a| a.boxes.as_ref())
                        else {
                            return Err(format!(
                                "{what} is a box check of argument '{}', which has no boxes",
                                info.name
                            ));
                        };
                        if dim == 0 || dim as usize >= b.strides.len() {
                            return Err(format!(
                                "{what} refers to box dimension {dim} of argument '{}', not in 1..{}",
                                info.name,
                                b.strides.len()
                            ));
                        }
                        if !sub.guarded.contains(&arg_index) {
                            return Err(format!(
                                "{what} is a box check of argument '{}', which the subkernel does not guard",
                                info.name
                            ));
                        }
                    }
                }
            }
            for (i, &g) in sub.guarded.iter().enumerate() {
                if !arg(g).is_some_and(|a| a.kind == ArgKind::LocalBuffer) {
                    buffer_arg(&format!("subkernel guarded[{i}]"), g)?;
                }
                if sub.guarded[..i].contains(&g) {
                    return Err(format!("subkernel: guarded lists argument {g} twice"));
                }
            }
            for (i, (u, _)) in sub.unguarded.iter().enumerate() {
                if !arg(*u).is_some_and(|a| a.kind == ArgKind::LocalBuffer) {
                    buffer_arg(&format!("subkernel unguarded[{i}]"), *u)?;
                }
            }
            for (i, &(g, m)) in sub.aligned.iter().enumerate() {
                if !sub.guarded.contains(&g) {
                    return Err(format!(
                        "subkernel aligned[{i}]: argument {g} is not guarded"
                    ));
                }
                if m < 2 {
                    return Err(format!(
                        "subkernel aligned[{i}]: a multiple of {m} is no alignment"
                    ));
                }
            }
        }
        Ok(())
    }

    fn validate_array(&self, a: &ArrayRanges, info: &ArgInfo) -> Result<(), String> {
        let what = format!("array '{}'", a.name);
        if a.name != info.name {
            return Err(format!(
                "{what}: argument {} is named '{}'",
                a.arg_index, info.name
            ));
        }
        if a.elem_type != info.elem_type {
            return Err(format!(
                "{what}: elem_type '{}' differs from the argument's '{}'",
                a.elem_type, info.elem_type
            ));
        }
        check_elem(&a.elem_type, a.elem_size).map_err(|m| format!("{what}: {m}"))?;
        if a.elem_size != info.elem_size {
            return Err(format!(
                "{what}: elem_size {} differs from the argument's elem_size {}",
                a.elem_size, info.elem_size
            ));
        }
        let writes = matches!(a.mode, Mode::W | Mode::RW);
        if writes && info.kind == ArgKind::ConstantBuffer {
            return Err(format!("{what}: a __constant buffer cannot be written"));
        }
        if !writes && a.write.is_some() {
            return Err(format!(
                "{what}: a write verdict for an array that is not written"
            ));
        }
        if !writes && a.write_slice.is_some() {
            return Err(format!(
                "{what}: a write_slice for an array that is not written"
            ));
        }
        if let Some(red) = &a.reduction {
            if !writes || !matches!(a.status, ArrayStatus::Whole { .. }) {
                return Err(format!(
                    "{what}: a reduction for an array that is not written and transferred whole"
                ));
            }
            let integer = matches!(
                a.elem_type.as_str(),
                "int" | "uint" | "long" | "ulong" | "unsigned int" | "unsigned long"
            );
            if !integer || !matches!(a.elem_size, 4 | 8) {
                return Err(format!(
                    "{what}: a reduction ({}) over elements of type '{}', not a 4- or 8-byte integer",
                    red.op,
                    a.elem_type.escape_debug()
                ));
            }
        }
        if a.checked && (!writes || a.reduction.is_some()) {
            return Err(format!(
                "{what}: a checked merge for an array that is not written or is merged as a reduction"
            ));
        }
        if a.mode == Mode::W && a.read_slice.is_some() {
            return Err(format!(
                "{what}: a read_slice for an array that is not read"
            ));
        }
        if let Some(b) = &a.boxes {
            if let ArrayStatus::Whole { .. } = a.status {
                return Err(format!(
                    "{what}: boxes for an array that is transferred whole"
                ));
            }
            let n = b.strides.len();
            // a 1-D array has boxes only for its read runs
            let runs_1d = n == 1 && !b.read_parts.is_empty() && b.write.is_none();
            if n < 2 && !runs_1d {
                return Err(format!(
                    "{what}: boxes with {n} stride{}, not at least 2 (a 1-D array has boxes only for read parts)",
                    if n == 1 { "" } else { "s" }
                ));
            }
            if b.strides.last().map(|s| s.trim()) != Some("1") {
                return Err(format!(
                    "{what}: boxes.strides ends in '{}', not '1'",
                    b.strides.last().map_or("", |s| s.as_str()).escape_debug()
                ));
            }
            for (field, bx) in [("read", &b.read), ("write", &b.write)] {
                if let Some(bx) = bx {
                    if bx.len() != n {
                        return Err(format!(
                            "{what}: boxes.{field} has {} dimensions, boxes.strides {n}",
                            bx.len()
                        ));
                    }
                }
            }
            if !writes && b.write.is_some() {
                return Err(format!(
                    "{what}: a write box for an array that is not written"
                ));
            }
            if a.mode == Mode::W && b.read.is_some() {
                return Err(format!("{what}: a read box for an array that is not read"));
            }
            if b.write_exact && b.write.is_none() {
                return Err(format!("{what}: boxes.write_exact without a write box"));
            }
            if !b.read_parts.is_empty() {
                if b.read.is_none() {
                    return Err(format!("{what}: boxes.read_parts without a read box"));
                }
                if b.read_parts.len() < 2 {
                    return Err(format!(
                        "{what}: boxes.read_parts has 1 part, not at least 2 (one part is the read box)"
                    ));
                }
                if b.read_parts.len() > MAX_READ_PARTS {
                    return Err(format!(
                        "{what}: boxes.read_parts has {} parts, more than {MAX_READ_PARTS}",
                        b.read_parts.len()
                    ));
                }
                for (p, bx) in b.read_parts.iter().enumerate() {
                    if bx.len() != n {
                        return Err(format!(
                            "{what}: boxes.read_parts[{p}] has {} dimensions, boxes.strides {n}",
                            bx.len()
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    fn validate_expressions(&self) -> Result<(), RangesError> {
        self.bind_expressions().map(|_| ())
    }

    /// [`KernelRanges::validate`], keeping what it parsed: every expression
    /// parsed and bound to [`KernelRanges::param_names`] once, for the
    /// launcher (which would otherwise parse each one again).
    pub fn validate_and_bind(&self) -> Result<BoundKernel, RangesError> {
        self.validate_fields()
            .map_err(|message| RangesError::Invalid {
                kernel: self.name.clone(),
                message,
            })?;
        self.bind_expressions()
    }

    fn bind_expressions(&self) -> Result<BoundKernel, RangesError> {
        let names = self.param_names();
        let bad = |array: &str, field: String, e: ExprError| RangesError::BadExpression {
            kernel: self.name.clone(),
            array: array.to_string(),
            field,
            message: e.to_string(),
        };
        let check_params = |params: &[String]| -> Result<(), ExprError> {
            match params.iter().find(|p| !names.contains(&p.as_str())) {
                Some(p) => Err(ExprError::UnknownParam {
                    name: p.clone(),
                    known: names.join(", "),
                }),
                None => Ok(()),
            }
        };
        let bind_pw = |text: &str| {
            let e = PwExpr::parse(text)?;
            check_params(e.params())?;
            e.bind(&names)
        };
        let bind_cond = |text: &str| {
            let c = Condition::parse(text)?;
            check_params(c.params())?;
            c.bind(&names)
        };

        let mut arrays = Vec::with_capacity(self.arrays.len());
        for a in &self.arrays {
            let bind_range = |field: &str,
                              r: &Option<crate::file::Range>|
             -> Result<Option<BoundRange>, RangesError> {
                let Some(r) = r else { return Ok(None) };
                Ok(Some(BoundRange {
                    lower: bind_pw(&r.lower)
                        .map_err(|e| bad(&a.name, format!("{field}.lower"), e))?,
                    upper: bind_pw(&r.upper)
                        .map_err(|e| bad(&a.name, format!("{field}.upper"), e))?,
                }))
            };
            let bind_count = |field: &str,
                              c: Option<&crate::file::Count>|
             -> Result<Option<BoundCount>, RangesError> {
                let Some(c) = c else { return Ok(None) };
                let mut terms = Vec::with_capacity(c.terms.len());
                for (t, term) in c.terms.iter().enumerate() {
                    let mut chambers = Vec::with_capacity(term.len());
                    for (k, ch) in term.iter().enumerate() {
                        let domain = bind_cond(&ch.domain)
                            .map_err(|e| bad(&a.name, format!("{field}[{t}][{k}].domain"), e))?;
                        let value = bind_pw(&ch.value)
                            .map_err(|e| bad(&a.name, format!("{field}[{t}][{k}].value"), e))?;
                        chambers.push((domain, value));
                    }
                    terms.push(chambers);
                }
                let at = crate::file::bind_point(&c.at, &names)
                    .map_err(|e| bad(&a.name, format!("{field}.at"), e))?;
                Ok(Some(BoundCount::from_terms(terms, at)))
            };
            let written = a.write.as_ref().and_then(|w| w.written_count.as_ref());
            let boxes = match &a.boxes {
                None => None,
                Some(b) => {
                    let mut strides = Vec::with_capacity(b.strides.len());
                    for (k, s) in b.strides.iter().enumerate() {
                        strides.push(
                            bind_pw(s)
                                .map_err(|e| bad(&a.name, format!("boxes.strides[{k}]"), e))?,
                        );
                    }
                    let bind_box =
                        |field: &str,
                         bx: &Option<Vec<crate::file::Range>>|
                         -> Result<Option<Vec<BoundRange>>, RangesError> {
                            let Some(bx) = bx else { return Ok(None) };
                            let mut out = Vec::with_capacity(bx.len());
                            for (k, r) in bx.iter().enumerate() {
                                out.push(
                                    bind_range(&format!("boxes.{field}[{k}]"), &Some(r.clone()))?
                                        .expect("a range was given"),
                                );
                            }
                            Ok(Some(out))
                        };
                    let mut read_parts = Vec::with_capacity(b.read_parts.len());
                    for (p, bx) in b.read_parts.iter().enumerate() {
                        read_parts.push(
                            bind_box(&format!("read_parts[{p}]"), &Some(bx.clone()))?
                                .expect("a box was given"),
                        );
                    }
                    Some(BoundBoxes {
                        strides,
                        read_parts,
                        read: bind_box("read", &b.read)?,
                        write: bind_box("write", &b.write)?,
                        write_exact: b.write_exact,
                    })
                }
            };
            arrays.push(BoundArray {
                boxes,
                total: bind_range("total", &a.total)?,
                slice: bind_range("slice", &a.slice)?,
                read_slice: bind_range("read_slice", &a.read_slice)?,
                write_slice: bind_range("write_slice", &a.write_slice)?,
                count_total: bind_count("count_total", a.count_total.as_ref())?,
                count_slice: bind_count("count_slice", a.count_slice.as_ref())?,
                written_count: bind_count("write.written_count", written)?,
            });
        }
        let mut assumptions = Vec::with_capacity(self.assumptions.len());
        for (i, asm) in self.assumptions.iter().enumerate() {
            if let Some(a) = asm.array {
                if !self.arrays.iter().any(|x| x.arg_index == a) {
                    return Err(RangesError::BadExpression {
                        kernel: self.name.clone(),
                        array: String::new(),
                        field: format!("assumptions[{i}].array"),
                        message: format!("argument {a} has no array entry"),
                    });
                }
            }
            assumptions.push(
                bind_cond(&asm.condition)
                    .map_err(|e| bad("", format!("assumptions[{i}].condition"), e))?,
            );
        }
        Ok(BoundKernel {
            arrays,
            assumptions,
        })
    }
}

/// The expressions of one array, bound (see [`KernelRanges::validate_and_bind`]).
#[derive(Debug, Clone)]
pub struct BoundArray {
    /// [`ArrayRanges::total`].
    pub total: Option<BoundRange>,
    /// [`ArrayRanges::slice`].
    pub slice: Option<BoundRange>,
    /// [`ArrayRanges::read_slice`].
    pub read_slice: Option<BoundRange>,
    /// [`ArrayRanges::write_slice`].
    pub write_slice: Option<BoundRange>,
    /// [`ArrayRanges::count_total`].
    pub count_total: Option<BoundCount>,
    /// [`ArrayRanges::count_slice`].
    pub count_slice: Option<BoundCount>,
    /// [`crate::WriteVerdict::written_count`].
    pub written_count: Option<BoundCount>,
    /// [`ArrayRanges::boxes`].
    pub boxes: Option<BoundBoxes>,
}

/// An array's [`crate::Boxes`], every expression bound (see
/// [`KernelRanges::validate_and_bind`]).
#[derive(Debug, Clone)]
pub struct BoundBoxes {
    /// [`crate::Boxes::strides`], one per delinearized dimension.
    pub strides: Vec<BoundExpr>,
    /// [`crate::Boxes::read`], one range per dimension.
    pub read: Option<Vec<BoundRange>>,
    /// [`crate::Boxes::write`], one range per dimension.
    pub write: Option<Vec<BoundRange>>,
    /// [`crate::Boxes::write_exact`].
    pub write_exact: bool,
    /// [`crate::Boxes::read_parts`], one range per dimension of each part.
    pub read_parts: Vec<Vec<BoundRange>>,
}

/// The most parts [`crate::Boxes::read_parts`] may have (each part is
/// `2 * dims` arguments of the subkernel and one more test per read).
pub const MAX_READ_PARTS: usize = 4;

/// Every expression of a kernel's entry, parsed and bound once, in the
/// order of [`KernelRanges::arrays`] and [`KernelRanges::assumptions`].
#[derive(Debug, Clone)]
pub struct BoundKernel {
    /// One per array.
    pub arrays: Vec<BoundArray>,
    /// One per assumption.
    pub assumptions: Vec<BoundCondition>,
}

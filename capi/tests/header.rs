//! The checked-in header `include/clpart.h` against the Rust side: every
//! `extern "C"` function of `src/` with its C prototype (types and
//! parameter names), every status code (`#define CLPART_*`) with its value,
//! every `#[repr(C)]` struct with its fields. A mismatch fails with both
//! sides printed.

use std::collections::BTreeMap;
use std::path::Path;

fn read(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Removes `/* */` and `//` comments.
fn strip_c_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    loop {
        let block = rest.find("/*");
        let line = rest.find("//");
        match (block, line) {
            (Some(b), l) if l.is_none_or(|l| b < l) => {
                out.push_str(&rest[..b]);
                let end = rest[b..].find("*/").expect("unterminated comment") + b + 2;
                out.push(' ');
                rest = &rest[end..];
            }
            (_, Some(l)) => {
                out.push_str(&rest[..l]);
                rest = &rest[l..];
                rest = rest.find('\n').map_or("", |n| &rest[n..]);
            }
            _ => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

/// A C declaration as tokens: identifiers and `*` separately, whitespace
/// collapsed (`clpart_plan **out` → `clpart_plan * * out`).
fn tokens(decl: &str) -> String {
    decl.replace('*', " * ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// A C prototype in canonical form: `RET NAME(PARAM, PARAM)`.
fn canonical(ret: &str, name: &str, params: &[String]) -> String {
    format!(
        "{} {}({})",
        tokens(ret),
        name,
        params
            .iter()
            .map(|p| tokens(p))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// `name → prototype` of every `clpart_*` function the header declares.
fn header_functions(header: &str) -> BTreeMap<String, String> {
    let code = strip_c_comments(header);
    let code: String = code
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = BTreeMap::new();
    for stmt in code.split([';', '{', '}']) {
        let stmt = stmt.split_whitespace().collect::<Vec<_>>().join(" ");
        let Some(open) = stmt.find('(') else { continue };
        if stmt.starts_with("typedef") || !stmt.ends_with(')') {
            continue;
        }
        let head = &stmt[..open];
        let Some(name_at) = head.rfind(|c: char| !(c.is_alphanumeric() || c == '_')) else {
            continue;
        };
        let name = head[name_at + 1..].trim();
        if !name.starts_with("clpart_") {
            continue;
        }
        let ret = &head[..name_at + 1];
        let inner = &stmt[open + 1..stmt.len() - 1];
        let params: Vec<String> = if inner.trim() == "void" {
            Vec::new()
        } else {
            inner.split(',').map(|p| p.trim().to_string()).collect()
        };
        let old = out.insert(name.to_string(), canonical(ret, name, &params));
        assert!(old.is_none(), "clpart.h declares '{name}' twice");
    }
    out
}

/// The C spelling of a Rust FFI type of this crate.
fn c_type(rust: &str) -> String {
    let t = rust.trim();
    if let Some(inner) = t.strip_prefix("*mut ") {
        return format!("{} *", c_type(inner));
    }
    if let Some(inner) = t.strip_prefix("*const ") {
        let c = c_type(inner);
        return if inner.trim_start().starts_with('*') {
            format!("{c} const *")
        } else {
            format!("const {c} *")
        };
    }
    match t {
        "c_int" => "int",
        "c_char" => "char",
        "c_void" => "void",
        "usize" => "size_t",
        "f64" => "double",
        "u64" => "uint64_t",
        "cl_uint" | "cl_device_id" | "clpart_plan" | "clpart_buffer" | "clpart_report" | "clpart_device_report" => t,
        other => {
            panic!("no C spelling for the Rust type '{other}': extend c_type in tests/header.rs")
        }
    }
    .to_string()
}

/// `name → prototype` of every `extern "C"` function in the crate's sources.
fn rust_functions() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("extern \"C\" fn ") {
            let after = &rest[at + "extern \"C\" fn ".len()..];
            let open = after.find('(').unwrap();
            let name = after[..open].trim().to_string();
            // the parameter list ends at the matching parenthesis
            let mut depth = 0;
            let mut close = open;
            for (i, ch) in after.char_indices().skip(open) {
                match ch {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            close = i;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let params: Vec<String> = after[open + 1..close]
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (pname, ty) = p
                        .split_once(':')
                        .unwrap_or_else(|| panic!("parameter '{p}' of '{name}'"));
                    format!("{} {}", c_type(ty), pname.trim())
                })
                .collect();
            let tail = &after[close + 1..];
            let body = tail.find('{').unwrap();
            let ret = match tail[..body].trim().strip_prefix("->") {
                Some(r) => c_type(r),
                None => "void".to_string(),
            };
            assert!(
                name.starts_with("clpart_"),
                "{}: extern \"C\" fn '{name}' is not named clpart_*",
                file.display()
            );
            assert!(
                rest[..at].trim_end().ends_with("pub unsafe")
                    || rest[..at].trim_end().ends_with("pub"),
                "'{name}' must be pub"
            );
            assert!(
                rest[..at]
                    .rfind("#[no_mangle]")
                    .is_some_and(|m| !rest[m..at].contains("fn ")),
                "'{name}' must be #[no_mangle]"
            );
            out.insert(name.clone(), canonical(&ret, &name, &params));
            rest = &after[close..];
        }
    }
    out
}

#[test]
fn every_function_matches_the_header() {
    let header = header_functions(&read("include/clpart.h"));
    let rust = rust_functions();
    assert!(
        rust.len() >= 15,
        "found only {} extern functions",
        rust.len()
    );
    let mut problems = Vec::new();
    for (name, proto) in &rust {
        match header.get(name) {
            None => problems.push(format!("missing in clpart.h: {proto};")),
            Some(h) if h != proto => problems.push(format!(
                "differs: '{name}'\n    clpart.h: {h}\n    rust:     {proto}"
            )),
            _ => {}
        }
    }
    for (name, proto) in &header {
        if !rust.contains_key(name) {
            problems.push(format!(
                "declared in clpart.h but not defined in rust: {proto}"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "clpart.h drifted from capi/src:\n{}",
        problems.join("\n")
    );
}

#[test]
fn status_codes_match_the_header() {
    let header = read("include/clpart.h");
    let mut defines = BTreeMap::new();
    for line in header.lines() {
        let mut words = line.split_whitespace();
        if words.next() != Some("#define") {
            continue;
        }
        let (Some(name), Some(value)) = (words.next(), words.next()) else {
            continue;
        };
        if name.starts_with("CLPART_") && name != "CLPART_H" {
            let v: i32 = value
                .parse()
                .unwrap_or_else(|_| panic!("#define {name} {value}: not a number"));
            defines.insert(name.to_string(), v);
        }
    }
    // the constants as the Rust source writes them
    let source = read("src/status.rs");
    let mut consts = BTreeMap::new();
    for line in source.lines() {
        let Some(rest) = line.trim().strip_prefix("pub const CLPART_") else {
            continue;
        };
        let (name, value) = rest
            .split_once(": c_int =")
            .expect("pub const CLPART_X: c_int = N;");
        consts.insert(
            format!("CLPART_{name}"),
            value.trim().trim_end_matches(';').parse::<i32>().unwrap(),
        );
    }
    // the table behind clpart_status_name
    let table: BTreeMap<String, i32> = clpart::STATUS_NAMES
        .iter()
        .map(|(v, n)| (n.to_str().unwrap().to_string(), *v))
        .collect();
    assert_eq!(
        defines, consts,
        "#define CLPART_* in clpart.h vs pub const CLPART_* in src/status.rs"
    );
    assert_eq!(
        table, consts,
        "STATUS_NAMES vs pub const CLPART_* in src/status.rs"
    );
    let mut values: Vec<i32> = consts.values().copied().collect();
    values.sort();
    values.dedup();
    assert_eq!(values.len(), consts.len(), "two status codes share a value");
    for (name, v) in &consts {
        let got = unsafe { std::ffi::CStr::from_ptr(clpart::clpart_status_name(*v)) };
        assert_eq!(got.to_str().unwrap(), name);
    }
    assert_eq!(clpart::CLPART_SUCCESS, 0);
}

/// `struct name → [(C type, field)]` of the header's typedef'd structs.
fn header_structs(header: &str) -> BTreeMap<String, Vec<(String, String)>> {
    let code = strip_c_comments(header);
    let mut out = BTreeMap::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("typedef struct ") {
        let after = &rest[at + "typedef struct ".len()..];
        let (Some(open), Some(semi)) = (after.find('{'), after.find(';')) else {
            break;
        };
        if semi < open {
            rest = &after[semi..]; // an opaque typedef
            continue;
        }
        let name = after[..open].trim().to_string();
        let close = after.find('}').unwrap();
        let fields = after[open + 1..close]
            .split(';')
            .map(|f| f.split_whitespace().collect::<Vec<_>>())
            .filter(|w| !w.is_empty())
            .map(|w| {
                (
                    tokens(&w[..w.len() - 1].join(" ")),
                    w[w.len() - 1].to_string(),
                )
            })
            .collect();
        out.insert(name, fields);
        rest = &after[close..];
    }
    out
}

/// The same for the `#[repr(C)]` structs of `src/lib.rs`.
fn rust_structs(source: &str) -> BTreeMap<String, Vec<(String, String)>> {
    let mut out = BTreeMap::new();
    let mut rest = source;
    while let Some(at) = rest.find("#[repr(C)]") {
        let after = &rest[at..];
        let s = after.find("pub struct ").unwrap() + "pub struct ".len();
        let open = after.find('{').unwrap();
        let close = after.find('}').unwrap();
        let name = after[s..open].trim().to_string();
        let fields = after[open + 1..close]
            .lines()
            .map(str::trim)
            .filter_map(|l| l.strip_prefix("pub "))
            .map(|l| {
                let (f, ty) = l.trim_end_matches(',').split_once(':').unwrap();
                (tokens(&c_type(ty)), f.trim().to_string())
            })
            .collect();
        out.insert(name, fields);
        rest = &after[close..];
    }
    out
}

#[test]
fn report_structs_match_the_header() {
    let header = header_structs(&read("include/clpart.h"));
    let rust = rust_structs(&read("src/lib.rs"));
    assert_eq!(
        header.keys().collect::<Vec<_>>(),
        vec!["clpart_device_report", "clpart_report"]
    );
    assert_eq!(
        header, rust,
        "typedef structs of clpart.h vs #[repr(C)] structs of src/lib.rs"
    );
}

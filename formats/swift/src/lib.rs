//! Two C entry points: symbolic-demangle's Swift demangler (see swift_demangle.h) and
//! rustc-demangle's Rust demangler (see rust_demangle.h).

use std::fmt::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};

use symbolic_common::{Language, Name, NameMangling};
use symbolic_demangle::{Demangle, DemangleOptions};

/// Demangles the Swift symbol `input[..input_len]` in `style` (0 complete, 1 name only) into
/// `output[..output_capacity]`. Returns the byte length of the demangled name (which may exceed
/// `output_capacity`: call again with a larger buffer), or 0 when the input is not a Swift
/// symbol the demangler understands. Never unwinds into the caller.
///
/// # Safety
/// `input` must point to `input_len` readable bytes and `output` to `output_capacity` writable
/// bytes (it may be null when `output_capacity` is 0).
#[no_mangle]
pub unsafe extern "C" fn restack_swift_demangle(
    input: *const u8,
    input_len: usize,
    style: u32,
    output: *mut u8,
    output_capacity: usize,
) -> usize {
    demangle_into(input, input_len, output, output_capacity, |mangled| {
        let options = if style == 1 {
            DemangleOptions::name_only()
        } else {
            DemangleOptions::complete()
        };
        let text = Name::new(mangled, NameMangling::Mangled, Language::Swift).demangle(options)?;
        // The demangler hands back its input when it cannot read it.
        (!text.is_empty() && text != mangled).then_some(text)
    })
}

/// Demangles the Rust symbol `input[..input_len]` as Rust's own backtrace prints it under
/// RUST_BACKTRACE=1 (rustc-demangle's alternate form: no hash, no crate disambiguators) into
/// `output[..output_capacity]`. Returns the byte length of the demangled name (which may exceed
/// `output_capacity`: call again with a larger buffer), or 0 when the input is not a Rust
/// symbol: a v0 symbol ("_R…") rustc-demangle reads, or a legacy one ("_ZN…17h<16 hex>E")
/// whose last path element is the hash rustc appends. Never unwinds into the caller.
///
/// # Safety
/// `input` must point to `input_len` readable bytes and `output` to `output_capacity` writable
/// bytes (it may be null when `output_capacity` is 0).
#[no_mangle]
pub unsafe extern "C" fn restack_rust_demangle(
    input: *const u8,
    input_len: usize,
    output: *mut u8,
    output_capacity: usize,
) -> usize {
    demangle_into(input, input_len, output, output_capacity, demangle_rust)
}

/// What both entry points share: `input` read as UTF-8 (anything else is no symbol), `demangle`
/// run without unwinding into the caller, and its answer copied into `output` when it fits.
/// Returns the answer's byte length, or 0 for none.
///
/// # Safety
/// As for the entry points.
unsafe fn demangle_into(
    input: *const u8,
    input_len: usize,
    output: *mut u8,
    output_capacity: usize,
    demangle: impl FnOnce(&str) -> Option<String>,
) -> usize {
    if input.is_null() {
        return 0;
    }
    let bytes = std::slice::from_raw_parts(input, input_len);
    let Ok(mangled) = std::str::from_utf8(bytes) else {
        return 0;
    };
    let Ok(Some(text)) = catch_unwind(AssertUnwindSafe(|| demangle(mangled))) else {
        return 0;
    };
    if !output.is_null() && text.len() <= output_capacity {
        std::ptr::copy_nonoverlapping(text.as_ptr(), output, text.len());
    }
    text.len()
}

fn demangle_rust(mangled: &str) -> Option<String> {
    let v0 = mangled.starts_with("_R") || mangled.starts_with("__R");
    // rustc-demangle reads every "_ZN<length><name>…E" as Rust, C++ nested names without
    // parameters included ("_ZN3foo3barE", a C++ variable); only rustc's hash tells them apart.
    if !v0 && !legacy_ends_in_hash(mangled) {
        return None;
    }
    let symbol = rustc_demangle::try_demangle(mangled).ok()?;
    let mut text = String::new();
    write!(text, "{symbol:#}").ok()?;
    // Markers rustc-demangle prints in place of what it gave up on: not a name to store.
    if text.is_empty()
        || text.contains("{recursion limit reached}")
        || text.contains("{size limit reached}")
        || text.contains("{invalid syntax}")
    {
        return None;
    }
    Some(text)
}

/// True for "_ZN" (or Mach-O's "__ZN") followed by length-prefixed path elements up to 'E', the
/// last of which is "h" and 16 hex digits: rustc's legacy mangling.
fn legacy_ends_in_hash(mangled: &str) -> bool {
    let Some(rest) = mangled
        .strip_prefix("_ZN")
        .or_else(|| mangled.strip_prefix("__ZN"))
    else {
        return false;
    };
    let bytes = rest.as_bytes();
    let mut at = 0;
    let mut last: &[u8] = &[];
    while at < bytes.len() && bytes[at] != b'E' {
        // A length of at most 5 digits: no path element of a real symbol is longer.
        let mut length = 0usize;
        let start = at;
        while at < bytes.len() && bytes[at].is_ascii_digit() && at - start < 5 {
            length = length * 10 + usize::from(bytes[at] - b'0');
            at += 1;
        }
        if at == start || length == 0 || length > bytes.len() - at || bytes[at].is_ascii_digit() {
            return false;
        }
        last = &bytes[at..at + length];
        at += length;
    }
    at < bytes.len()
        && last.len() == 17
        && last[0] == b'h'
        && last[1..].iter().all(u8::is_ascii_hexdigit)
}

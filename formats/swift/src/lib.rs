//! One C entry point over symbolic-demangle's Swift demangler (see swift_demangle.h).

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
    if input.is_null() {
        return 0;
    }
    let bytes = std::slice::from_raw_parts(input, input_len);
    let Ok(mangled) = std::str::from_utf8(bytes) else {
        return 0;
    };
    let demangled = catch_unwind(AssertUnwindSafe(|| {
        let options = if style == 1 {
            DemangleOptions::name_only()
        } else {
            DemangleOptions::complete()
        };
        Name::new(mangled, NameMangling::Mangled, Language::Swift).demangle(options)
    }));
    let Ok(Some(text)) = demangled else {
        return 0;
    };
    // The demangler hands back its input when it cannot read it.
    if text.is_empty() || text == mangled {
        return 0;
    }
    if !output.is_null() && text.len() <= output_capacity {
        std::ptr::copy_nonoverlapping(text.as_ptr(), output, text.len());
    }
    text.len()
}

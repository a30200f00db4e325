//! Arrow arrays handed over through the Arrow C Data Interface
//! (arrow.apache.org/docs/format/CDataInterface.html): pyarrow exports a record batch as two
//! PyCapsules (`__arrow_c_array__`). The structs are read in place while the capsules are
//! alive (their destructors release them), so Parquet-decoded buffers reach the converters
//! without a copy. No arrow-rs: trace columns are only integers, strings and lists of
//! integers, which need a few dozen lines.

use std::ffi::{c_char, c_void, CStr};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods, PyTuple};

#[repr(C)]
struct FfiSchema {
    format: *const c_char,
    name: *const c_char,
    metadata: *const c_char,
    flags: i64,
    n_children: i64,
    children: *mut *mut FfiSchema,
    dictionary: *mut FfiSchema,
    release: Option<unsafe extern "C" fn(*mut FfiSchema)>,
    private_data: *mut c_void,
}

#[repr(C)]
struct FfiArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *mut *const c_void,
    children: *mut *mut FfiArray,
    dictionary: *mut FfiArray,
    release: Option<unsafe extern "C" fn(*mut FfiArray)>,
    private_data: *mut c_void,
}

/// The capsules of one exported array (usually a record batch: a struct array whose
/// children are the columns). Borrowed views of it live as long as it does.
pub(crate) struct Exported<'py> {
    _schema: Bound<'py, PyCapsule>,
    _array: Bound<'py, PyCapsule>,
    schema: *const FfiSchema,
    array: *const FfiArray,
}

fn capsule<'py>(obj: &Bound<'py, PyAny>, name: &CStr) -> PyResult<Bound<'py, PyCapsule>> {
    let capsule = obj.downcast::<PyCapsule>()?.clone();
    if capsule.name()? != Some(name) {
        return Err(PyValueError::new_err(format!(
            "__arrow_c_array__ returned a capsule not named {name:?}"
        )));
    }
    Ok(capsule)
}

impl<'py> Exported<'py> {
    /// Exports `obj` (anything with `__arrow_c_array__`: pyarrow RecordBatch, Array).
    pub(crate) fn new(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        let pair = obj.call_method0("__arrow_c_array__")?;
        let pair = pair.downcast::<PyTuple>()?;
        let schema = capsule(&pair.get_item(0)?, c"arrow_schema")?;
        let array = capsule(&pair.get_item(1)?, c"arrow_array")?;
        let (s, a) = (
            schema.pointer() as *const FfiSchema,
            array.pointer() as *const FfiArray,
        );
        // SAFETY: the capsules hold live structs of the C Data Interface (checked names).
        let released = unsafe { (*s).release.is_none() || (*a).release.is_none() };
        if released {
            return Err(PyValueError::new_err(
                "the exported Arrow array was released",
            ));
        }
        Ok(Self {
            _schema: schema,
            _array: array,
            schema: s,
            array: a,
        })
    }

    pub(crate) fn array(&self) -> Array<'_> {
        // SAFETY: the pointers stay valid while the capsules (owned by self) live.
        unsafe { Array::whole(&*self.schema, &*self.array) }
    }
}

/// A borrowed Arrow array and its type, or a window of it (`slice`).
#[derive(Clone, Copy)]
pub(crate) struct Array<'a> {
    schema: &'a FfiSchema,
    array: &'a FfiArray,
    /// Window: first value (from the array's offset) and length.
    start: usize,
    length: usize,
}

impl<'a> Array<'a> {
    fn whole(schema: &'a FfiSchema, array: &'a FfiArray) -> Self {
        Self {
            schema,
            array,
            start: 0,
            length: array.length.max(0) as usize,
        }
    }
}

/// The validity bitmap of an array (bit i of `bits`, counted from `offset`).
#[derive(Clone, Copy)]
pub(crate) struct Validity<'a> {
    bits: &'a [u8],
    offset: usize,
}

impl Validity<'_> {
    #[inline]
    pub(crate) fn is_valid(&self, i: usize) -> bool {
        let j = self.offset + i;
        self.bits[j >> 3] & (1 << (j & 7)) != 0
    }
}

fn c_str<'a>(p: *const c_char) -> &'a str {
    if p.is_null() {
        return "";
    }
    // SAFETY: the producer gives NUL-terminated UTF-8 strings (format and name).
    unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("")
}

impl<'a> Array<'a> {
    /// Format string of the C Data Interface ("i" int32, "l" int64, "u" utf8, "+l" list, …);
    /// for a dictionary array the format of its indices.
    pub(crate) fn format(&self) -> &'a str {
        c_str(self.schema.format)
    }

    pub(crate) fn name(&self) -> &'a str {
        c_str(self.schema.name)
    }

    pub(crate) fn len(&self) -> usize {
        self.length
    }

    /// Where the (window's) values start in the buffers, in values.
    pub(crate) fn offset(&self) -> usize {
        self.array.offset.max(0) as usize + self.start
    }

    /// Values `start..start + len` of this array (clamped to it).
    pub(crate) fn slice(&self, start: usize, len: usize) -> Array<'a> {
        let start = start.min(self.length);
        Array {
            start: self.start + start,
            length: len.min(self.length - start),
            ..*self
        }
    }

    pub(crate) fn children(&self) -> Vec<Array<'a>> {
        let n = self.array.n_children.min(self.schema.n_children).max(0) as usize;
        (0..n)
            // SAFETY: n_children entries of both child pointer arrays are valid.
            .map(|i| unsafe {
                Array::whole(
                    &**self.schema.children.add(i),
                    &**self.array.children.add(i),
                )
            })
            .collect()
    }

    /// The dictionary of a dictionary-encoded array.
    pub(crate) fn dictionary(&self) -> Option<Array<'a>> {
        if self.schema.dictionary.is_null() || self.array.dictionary.is_null() {
            return None;
        }
        // SAFETY: non-null dictionary pointers point to live structs of the same export.
        unsafe {
            Some(Array::whole(
                &*self.schema.dictionary,
                &*self.array.dictionary,
            ))
        }
    }

    fn raw_buffer(&self, i: usize) -> *const c_void {
        if (i as i64) >= self.array.n_buffers {
            return std::ptr::null();
        }
        // SAFETY: n_buffers entries are readable.
        unsafe { *self.array.buffers.add(i) }
    }

    /// Buffer `i` as `count` values of T (from the start of the buffer, not the offset).
    pub(crate) fn buffer<T>(&self, i: usize, count: usize) -> PyResult<&'a [T]> {
        let p = self.raw_buffer(i) as *const T;
        if count == 0 {
            return Ok(&[]);
        }
        if p.is_null() || !p.is_aligned() {
            return Err(PyValueError::new_err(format!(
                "Arrow column {}: buffer {i} is missing or misaligned",
                self.name()
            )));
        }
        // SAFETY: the producer's buffer i holds at least offset + length values of the type
        // its format names; callers ask for at most that many.
        Ok(unsafe { std::slice::from_raw_parts(p, count) })
    }

    /// The array's values as T (the format must be T's): `len` values from the offset.
    pub(crate) fn values<T>(&self) -> PyResult<&'a [T]> {
        let all = self.buffer::<T>(1, self.offset() + self.len())?;
        Ok(&all[self.offset()..])
    }

    /// None when every value is valid.
    pub(crate) fn validity(&self) -> Option<Validity<'a>> {
        let p = self.raw_buffer(0) as *const u8;
        if self.array.null_count == 0 || p.is_null() || self.format() == "n" {
            return None;
        }
        let bits = (self.offset() + self.len()).div_ceil(8);
        // SAFETY: a validity bitmap covers offset + length bits.
        let bits = unsafe { std::slice::from_raw_parts(p, bits) };
        Some(Validity {
            bits,
            offset: self.offset(),
        })
    }

    /// Every value null (null type, or a null count equal to the whole array's length).
    pub(crate) fn all_null(&self) -> bool {
        let whole = self.array.length;
        self.format() == "n" || (whole > 0 && self.array.null_count == whole)
    }
}

/// Arrow's integer value types, read as i64 (u64 wraps, as `as` does).
pub(crate) trait IntValue: Copy {
    fn as_i64(self) -> i64;
}

macro_rules! int_value {
    ($($t:ty),*) => {$(
        impl IntValue for $t {
            #[inline]
            fn as_i64(self) -> i64 {
                self as i64
            }
        }
    )*};
}
int_value!(i8, u8, i16, u16, i32, u32, i64, u64);

/// Evaluates `$body` with `$values` bound to `$col`'s values when its Arrow format is one
/// of the integer types (`$body` is generic over `IntValue`), else `$other`.
macro_rules! with_int_values {
    ($col:expr, |$values:ident| $body:expr, $other:expr) => {
        match $col.format() {
            "c" => {
                let $values = $col.values::<i8>()?;
                $body
            }
            "C" => {
                let $values = $col.values::<u8>()?;
                $body
            }
            "s" => {
                let $values = $col.values::<i16>()?;
                $body
            }
            "S" => {
                let $values = $col.values::<u16>()?;
                $body
            }
            "i" => {
                let $values = $col.values::<i32>()?;
                $body
            }
            "I" => {
                let $values = $col.values::<u32>()?;
                $body
            }
            "l" => {
                let $values = $col.values::<i64>()?;
                $body
            }
            "L" => {
                let $values = $col.values::<u64>()?;
                $body
            }
            _ => $other,
        }
    };
}
pub(crate) use with_int_values;

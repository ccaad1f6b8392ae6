//! Reading inputs from and writing results to NumPy's `.npy` files.
//!
//! f64, f32, int64 (`<i8`), int32 (`<i4`), bool (`|b1`), complex64 (`<c8`) and complex128 (`<c16`)
//! arrays are read as they are; the other
//! integer types (`i1 i2 u1 u2 u4`) are widened exactly to int64, and `u8` (uint64) too when every
//! value fits int64, else it is an error that says so (kiln has no unsigned type). C and Fortran order both load, in either byte
//! order (`<` little, `>` big, `|` and `=` the machine's, as NumPy reads them). kiln reads the header
//! and the data itself, checking each before it allocates: the header must be a dict with a string
//! `'descr'`, a `True`/`False` `'fortran_order'` and a tuple `'shape'` (`(10,)`, not `(10)`) of at
//! most 64 axes whose byte count can be addressed; a header that promises more data than the file
//! holds is an error, not an attempt to allocate it; the data buffer is reserved fallibly ("out of
//! memory"). Every error is one line naming the file.
//!
//! Results are written to a temporary file beside the target and renamed over it once complete, so
//! a full disk or a file-size limit leaves no half-written `.npy` behind (the temporary is removed).

use crate::array::Output;
use crate::error::{Error, Result};
use kiln_ir::num_complex::{Complex32, Complex64};
use ndarray::{ArrayD, IxDyn, ShapeBuilder};
use ndarray_npy::WriteNpyExt;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read};
use std::path::{Path, PathBuf};

/// An array read from a `.npy` file.
#[derive(Debug, Clone)]
pub enum NpyArray {
    /// A float64 array (`<f8`).
    F64(ArrayD<f64>),
    /// A float32 array (`<f4`).
    F32(ArrayD<f32>),
    /// An int64 array (`<i8`, or a narrower integer type widened).
    I64(ArrayD<i64>),
    /// An int32 array (`<i4`).
    I32(ArrayD<i32>),
    /// A bool array (`|b1`).
    Bool(ArrayD<bool>),
    /// A complex64 array (`<c8`).
    C64(ArrayD<Complex32>),
    /// A complex128 array (`<c16`).
    C128(ArrayD<Complex64>),
    /// A byte-string array (`|S<width>`).
    Bytes(crate::ByteStrings),
}

impl NpyArray {
    /// The array as a kernel's input.
    pub fn arg(&self) -> crate::ArrayArg<'_> {
        match self {
            NpyArray::F64(a) => a.into(),
            NpyArray::F32(a) => a.into(),
            NpyArray::I64(a) => a.into(),
            NpyArray::I32(a) => a.into(),
            NpyArray::Bool(a) => a.into(),
            NpyArray::C64(a) => a.into(),
            NpyArray::C128(a) => a.into(),
            NpyArray::Bytes(b) => b.arg(),
        }
    }

    /// The array's shape.
    pub fn shape(&self) -> &[usize] {
        match self {
            NpyArray::F64(a) => a.shape(),
            NpyArray::F32(a) => a.shape(),
            NpyArray::I64(a) => a.shape(),
            NpyArray::I32(a) => a.shape(),
            NpyArray::Bool(a) => a.shape(),
            NpyArray::C64(a) => a.shape(),
            NpyArray::C128(a) => a.shape(),
            NpyArray::Bytes(b) => &b.shape,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.shape().iter().product()
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn npy_error(path: &Path, message: impl std::fmt::Display) -> Error {
    Error::Npy {
        path: path.display().to_string(),
        // one line, whatever the message (an OS error or a header's text)
        message: message.to_string().replace(['\n', '\r'], " "),
    }
}

/// An element type a `.npy` file may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    F8,
    F4,
    I8,
    I4,
    I2,
    I1,
    U8,
    U4,
    U2,
    U1,
    B1,
    C8,
    C16,
    /// Byte strings of this width.
    S(usize),
}

impl Kind {
    fn parse(code: &str) -> Option<Kind> {
        Some(match code {
            "f8" => Kind::F8,
            "f4" => Kind::F4,
            "i8" => Kind::I8,
            "i4" => Kind::I4,
            "i2" => Kind::I2,
            "i1" => Kind::I1,
            "u8" => Kind::U8,
            "u4" => Kind::U4,
            "u2" => Kind::U2,
            "u1" => Kind::U1,
            "b1" => Kind::B1,
            "c8" => Kind::C8,
            "c16" => Kind::C16,
            // 1 to 2^32 - 1 bytes a string, as kiln's byte strings hold them
            s if s.starts_with('S') => Kind::S(
                s[1..]
                    .parse()
                    .ok()
                    .filter(|&w| w > 0 && u32::try_from(w).is_ok())?,
            ),
            _ => return None,
        })
    }

    fn size(self) -> usize {
        match self {
            Kind::C16 => 16,
            Kind::F8 | Kind::I8 | Kind::U8 | Kind::C8 => 8,
            Kind::F4 | Kind::I4 | Kind::U4 => 4,
            Kind::I2 | Kind::U2 => 2,
            Kind::I1 | Kind::U1 | Kind::B1 => 1,
            Kind::S(w) => w,
        }
    }
}

/// What a `.npy` header says.
#[derive(Debug, Clone, PartialEq)]
struct Header {
    kind: Kind,
    /// Whether the data is big-endian.
    big_endian: bool,
    fortran_order: bool,
    shape: Vec<usize>,
    /// Bytes before the data.
    data_offset: u64,
}

/// The text of `key`'s value in a header dict, up to the next `,` or `}` outside brackets and
/// quotes: `'descr': '<f8'` gives `'<f8'`, `'shape': (3, 4)` gives `(3, 4)`.
fn field<'h>(dict: &'h str, key: &str) -> Option<&'h str> {
    let at = dict.find(&format!("'{key}'"))?;
    let rest = dict[at + key.len() + 2..]
        .trim_start()
        .strip_prefix(':')?
        .trim_start();
    let (mut depth, mut quoted) = (0i32, false);
    for (i, c) in rest.char_indices() {
        match c {
            '\'' | '"' => quoted = !quoted,
            '(' | '[' if !quoted => depth += 1,
            ')' | ']' if !quoted => depth -= 1,
            ',' | '}' if !quoted && depth == 0 => return Some(rest[..i].trim_end()),
            _ => {}
        }
    }
    None
}

/// A Python tuple of non-negative integers: `()`, `(7,)`, `(3, 4)`, `(3, 4,)` (Python 2's `3L`
/// accepted); `(10)` is the integer 10, not a tuple, and refused as NumPy refuses it.
fn parse_shape(text: &str) -> std::result::Result<Vec<usize>, String> {
    let body = text
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .ok_or_else(|| format!("'shape' is {text}, not a tuple"))?;
    if body.trim().is_empty() {
        return Ok(Vec::new());
    }
    let mut parts: Vec<&str> = body.split(',').map(str::trim).collect();
    if parts.len() == 1 {
        return Err(format!(
            "'shape' is ({body}), not a tuple (a 1-d shape is written ({body},))"
        ));
    }
    if parts.last() == Some(&"") {
        parts.pop();
    }
    parts
        .iter()
        .map(|d| {
            let digits = d.strip_suffix('L').unwrap_or(d);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("'shape' {text} has the dimension '{d}'"));
            }
            digits
                .parse::<usize>()
                .map_err(|_| format!("'shape' {text}: dimension {d} overflows"))
        })
        .collect()
}

fn read_header(path: &Path, file: &mut impl Read) -> Result<Header> {
    let bad = |why: &str| npy_error(path, format!("not a valid .npy file: {why}"));
    let mut magic = [0u8; 8];
    file.read_exact(&mut magic).map_err(|_| bad("too short"))?;
    if &magic[..6] != b"\x93NUMPY" {
        return Err(bad("no NUMPY magic string"));
    }
    let header_len = match magic[6] {
        1 => {
            let mut b = [0u8; 2];
            file.read_exact(&mut b).map_err(|_| bad("truncated header"))?;
            u16::from_le_bytes(b) as u64
        }
        2 | 3 => {
            let mut b = [0u8; 4];
            file.read_exact(&mut b).map_err(|_| bad("truncated header"))?;
            u32::from_le_bytes(b) as u64
        }
        v => return Err(bad(&format!("format version {v}"))),
    };
    let prefix = if magic[6] == 1 { 10 } else { 12 };
    if header_len > 1 << 20 {
        return Err(bad("header longer than 1 MiB"));
    }
    let mut dict = vec![0u8; header_len as usize];
    file.read_exact(&mut dict).map_err(|_| bad("truncated header"))?;
    let dict = String::from_utf8_lossy(&dict);
    let dict = dict.trim();
    if !dict.starts_with('{') {
        return Err(bad("the header is not a dict"));
    }
    let descr = field(dict, "descr").ok_or_else(|| bad("no 'descr'"))?;
    let code = descr
        .strip_prefix('\'')
        .and_then(|d| d.strip_suffix('\''))
        .ok_or_else(|| {
            npy_error(
                path,
                format!("unsupported dtype {descr}: kiln reads float, integer and bool arrays"),
            )
        })?;
    let (order, kind_code) = match code.chars().next() {
        Some(c @ ('<' | '>' | '|' | '=')) => (c, &code[1..]),
        _ => ('=', code),
    };
    let kind = Kind::parse(kind_code).ok_or_else(|| {
        npy_error(
            path,
            format!("unsupported dtype '{kind_code}': kiln reads float, integer and bool arrays"),
        )
    })?;
    let big_endian = match order {
        '>' => true,
        '<' => false,
        _ => cfg!(target_endian = "big"),
    };
    let fortran_order = match field(dict, "fortran_order") {
        Some("True") => true,
        Some("False") | None => false,
        Some(other) => return Err(bad(&format!("'fortran_order' is {other}, not True or False"))),
    };
    let shape_text = field(dict, "shape").ok_or_else(|| bad("no 'shape'"))?;
    let shape = parse_shape(shape_text).map_err(|why| bad(&why))?;
    kiln_ir::shape::checked_addressable(&shape, kind.size()).map_err(|e| npy_error(path, e))?;
    Ok(Header {
        kind,
        big_endian,
        fortran_order,
        shape,
        data_offset: prefix + header_len,
    })
}

/// A value that can be decoded from `N` bytes in either byte order.
trait Decode<const N: usize>: Sized {
    fn decode(bytes: [u8; N], big_endian: bool) -> Self;
}

macro_rules! decode {
    ($($t:ty => $n:literal),*) => {$(
        impl Decode<$n> for $t {
            fn decode(bytes: [u8; $n], big_endian: bool) -> Self {
                if big_endian { <$t>::from_be_bytes(bytes) } else { <$t>::from_le_bytes(bytes) }
            }
        }
    )*};
}
decode!(f64 => 8, f32 => 4, i64 => 8, i32 => 4, i16 => 2, i8 => 1, u64 => 8, u32 => 4, u16 => 2, u8 => 1);

/// A complex number: its real part's bytes, then its imaginary part's.
macro_rules! decode_complex {
    ($($t:ty, $part:ty => $n:literal),*) => {$(
        impl Decode<$n> for $t {
            fn decode(bytes: [u8; $n], big_endian: bool) -> Self {
                let (re, im) = bytes.split_at($n / 2);
                let part = |b: &[u8]| <$part as Decode<{ $n / 2 }>>::decode(b.try_into().expect("half"), big_endian);
                <$t>::new(part(re), part(im))
            }
        }
    )*};
}
decode_complex!(Complex32, f32 => 8, Complex64, f64 => 16);

/// Reads `header`'s elements of type `S` from `data` and converts each with `f`.
fn read_data<S: Decode<N>, T, const N: usize>(
    path: &Path,
    header: &Header,
    data: &mut impl Read,
    f: impl Fn(S) -> T,
) -> Result<ArrayD<T>> {
    let count = kiln_ir::shape::checked_size(&header.shape)?;
    let mut values = Vec::new();
    values
        .try_reserve_exact(count)
        .map_err(|_| kiln_ir::IrError::Allocation {
            what: format!("the input {}", path.display()),
            elements: count,
        })?;
    let mut chunk = vec![0u8; N * 8192];
    while values.len() < count {
        let take = (count - values.len()).min(8192);
        let bytes = &mut chunk[..take * N];
        data.read_exact(bytes)
            .map_err(|e| npy_error(path, format!("reading the data: {e}")))?;
        values.extend(bytes.chunks_exact(N).map(|b| {
            f(S::decode(
                b.try_into().expect("chunks of N bytes"),
                header.big_endian,
            ))
        }));
    }
    let shape = IxDyn(&header.shape).set_f(header.fortran_order);
    ArrayD::from_shape_vec(shape, values).map_err(|e| npy_error(path, e))
}

/// The data that follows `header`: floats, int64, int32 and bool as they are, the other integer
/// types widened exactly to int64 (uint64 only where every value fits).
fn read_elements(path: &Path, header: &Header, data: &mut impl Read) -> Result<NpyArray> {
    let (h, f) = (header, data);
    Ok(match h.kind {
        Kind::F8 => NpyArray::F64(read_data::<f64, _, 8>(path, h, f, |v| v)?),
        Kind::F4 => NpyArray::F32(read_data::<f32, _, 4>(path, h, f, |v| v)?),
        Kind::I8 => NpyArray::I64(read_data::<i64, _, 8>(path, h, f, |v| v)?),
        Kind::I4 => NpyArray::I32(read_data::<i32, _, 4>(path, h, f, |v| v)?),
        Kind::I2 => NpyArray::I64(read_data::<i16, _, 2>(path, h, f, i64::from)?),
        Kind::I1 => NpyArray::I64(read_data::<i8, _, 1>(path, h, f, i64::from)?),
        Kind::U8 => {
            let wide = read_data::<u64, _, 8>(path, h, f, |v| v)?;
            if let Some(v) = wide.iter().find(|&&v| i64::try_from(v).is_err()) {
                return Err(npy_error(
                    path,
                    format!(
                        "uint64 value {v} does not fit int64: kiln reads uint64 arrays as int64 only \
                         when every value fits"
                    ),
                ));
            }
            NpyArray::I64(wide.mapv(|v| v as i64))
        }
        Kind::U4 => NpyArray::I64(read_data::<u32, _, 4>(path, h, f, i64::from)?),
        Kind::U2 => NpyArray::I64(read_data::<u16, _, 2>(path, h, f, i64::from)?),
        Kind::U1 => NpyArray::I64(read_data::<u8, _, 1>(path, h, f, i64::from)?),
        Kind::B1 => NpyArray::Bool(read_data::<u8, _, 1>(path, h, f, |v| v != 0)?),
        Kind::C8 => NpyArray::C64(read_data::<Complex32, _, 8>(path, h, f, |v| v)?),
        Kind::C16 => NpyArray::C128(read_data::<Complex64, _, 16>(path, h, f, |v| v)?),
        Kind::S(width) => NpyArray::Bytes(read_strings(path, h, f, width)?),
    })
}

/// `header`'s byte strings of `width` bytes from `data`, in C order.
fn read_strings(
    path: &Path,
    header: &Header,
    data: &mut impl Read,
    width: usize,
) -> Result<crate::ByteStrings> {
    let count = kiln_ir::shape::checked_size(&header.shape)?;
    let bytes = count
        .checked_mul(width)
        .ok_or_else(|| npy_error(path, format!("shape {:?} overflows", header.shape)))?;
    let mut raw = Vec::new();
    raw.try_reserve_exact(bytes)
        .map_err(|_| kiln_ir::IrError::Allocation {
            what: format!("the input {}", path.display()),
            elements: count,
        })?;
    data.take(bytes as u64)
        .read_to_end(&mut raw)
        .map_err(|e| npy_error(path, format!("reading the data: {e}")))?;
    if raw.len() != bytes {
        return Err(npy_error(path, "the data ends before the header's shape"));
    }
    if !header.fortran_order {
        return crate::ByteStrings {
            shape: Vec::new(),
            width,
            data: raw,
        }
        .into_shape(header.shape.clone());
    }
    // Fortran order: the C order of the reversed shape, its axes reversed back
    let reversed: Vec<usize> = header.shape.iter().rev().copied().collect();
    let order: Vec<usize> = (0..reversed.len()).rev().collect();
    Ok(crate::ByteStrings {
        shape: reversed,
        width,
        data: raw,
    }
    .permuted(&order))
}

/// A byte-string result as a version 1.0 `.npy` file (`|S<width>`, C order).
fn write_strings(w: &mut impl std::io::Write, b: &crate::ByteStrings) -> std::io::Result<()> {
    let shape = match b.shape.len() {
        1 => format!("({},)", b.shape[0]),
        _ => format!(
            "({})",
            b.shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut dict = format!(
        "{{'descr': '|S{}', 'fortran_order': False, 'shape': {shape}, }}",
        b.width
    );
    // the magic, version, length and dict padded with spaces to a multiple of 64, then a newline
    let total = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat((64 - total % 64) % 64));
    dict.push('\n');
    w.write_all(b"\x93NUMPY\x01\x00")?;
    let len = u16::try_from(dict.len())
        .map_err(|_| std::io::Error::other("a .npy header longer than 65535 bytes"))?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(dict.as_bytes())?;
    w.write_all(&b.data)
}

/// Reads a `.npy` file of any supported dtype.
pub fn read(path: &Path) -> Result<NpyArray> {
    let meta = std::fs::metadata(path).map_err(|e| npy_error(path, e))?;
    if meta.is_dir() {
        return Err(npy_error(path, "is a directory, not a .npy file"));
    }
    let mut file = BufReader::new(File::open(path).map_err(|e| npy_error(path, e))?);
    let header = read_header(path, &mut file)?;
    let count = kiln_ir::shape::checked_size(&header.shape)?;
    let want = count
        .checked_mul(header.kind.size())
        .ok_or_else(|| npy_error(path, format!("shape {:?} overflows", header.shape)))?;
    let have = meta.len().saturating_sub(header.data_offset);
    if meta.is_file() && (want as u64) > have {
        return Err(npy_error(
            path,
            format!(
                "the header promises {want} bytes of data for shape {:?} but the file holds {have}",
                header.shape
            ),
        ));
    }
    read_elements(path, &header, &mut file)
}

/// Reads a `.npy` file's bytes (what [`read`] does after opening the file): for fuzzing the reader
/// without a file system. The data may be longer than the header needs (the rest is ignored).
pub fn read_bytes(bytes: &[u8]) -> Result<NpyArray> {
    let path = Path::new("<bytes>");
    let mut r = bytes;
    let header = read_header(path, &mut r)?;
    let count = kiln_ir::shape::checked_size(&header.shape)?;
    if count.saturating_mul(header.kind.size()) > r.len() {
        return Err(npy_error(
            path,
            format!(
                "the header promises more data for shape {:?} than there is",
                header.shape
            ),
        ));
    }
    read_elements(path, &header, &mut r)
}

/// A shape spec of `kiln explain`, `f64[3,4]`, `f64[7,]` or `f32[]`: its dtype and shape, checked
/// (every dimension a decimal integer, only a single trailing comma empty, at most 64 axes, an
/// addressable byte count); `Ok(None)` if `value` is not of the form `f64[...]` or `f32[...]`.
pub fn shape_spec(value: &str) -> Result<Option<(kiln_ir::ElemType, Vec<usize>)>> {
    let bad = |why: String| Error::Npy {
        path: format!("shape spec '{value}'"),
        message: why,
    };
    let Some((dtype, rest)) = value.split_once('[') else {
        return Ok(None);
    };
    let dtype = match dtype {
        "f64" => kiln_ir::ElemType::F64,
        "f32" => kiln_ir::ElemType::F32,
        _ => return Ok(None),
    };
    let dims = rest
        .strip_suffix(']')
        .ok_or_else(|| bad("is missing its closing ']'".into()))?;
    let mut parts: Vec<&str> = dims.split(',').map(str::trim).collect();
    if parts.len() > 1 && parts.last() == Some(&"") {
        parts.pop();
    }
    if parts == [""] {
        parts.clear();
    }
    let shape = parts
        .iter()
        .map(|d| {
            if d.is_empty() {
                return Err(bad("has an empty dimension".into()));
            }
            if !d.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad(format!("has the dimension '{d}', not a decimal integer")));
            }
            d.parse::<usize>()
                .map_err(|_| bad(format!("has the dimension {d}, which does not fit in 64 bits")))
        })
        .collect::<Result<Vec<usize>>>()?;
    kiln_ir::shape::checked_addressable(&shape, dtype.size()).map_err(|e| bad(e.to_string()))?;
    Ok(Some((dtype, shape)))
}

/// The temporary file a result is written to before it is renamed to `path`.
fn temporary(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.kiln-{}.tmp", std::process::id()))
}

/// Writes a result as a `.npy` file in its own dtype.
///
/// A regular file (or a new one) is written as a temporary beside it and renamed over it when
/// complete; on any failure the temporary is removed and `path` is left as it was. Anything else
/// (`/dev/stdout`, a pipe) is written in place.
pub fn write(path: &Path, out: &Output) -> Result<()> {
    let in_place = std::fs::metadata(path).is_ok_and(|m| !m.is_file());
    let target = if in_place {
        path.to_path_buf()
    } else {
        temporary(path)
    };
    let written = write_to(&target, out);
    let renamed = written.and_then(|()| {
        if in_place {
            Ok(())
        } else {
            std::fs::rename(&target, path).map_err(|e| npy_error(path, e))
        }
    });
    if renamed.is_err() && !in_place {
        let _ = std::fs::remove_file(&target);
    }
    renamed.map_err(|e| match e {
        Error::Npy { message, .. } => npy_error(path, message),
        other => other,
    })
}

fn write_to(path: &Path, out: &Output) -> Result<()> {
    let file = File::create(path).map_err(|e| npy_error(path, e))?;
    let mut w = BufWriter::new(file);
    match out {
        Output::F64(a) => a.write_npy(&mut w),
        Output::F32(a) => a.write_npy(&mut w),
        Output::I64(a) => a.write_npy(&mut w),
        Output::I32(a) => a.write_npy(&mut w),
        Output::Bool(a) => a.write_npy(&mut w),
        Output::C64(a) => a.write_npy(&mut w),
        Output::C128(a) => a.write_npy(&mut w),
        Output::Bytes(b) => write_strings(&mut w, b).map_err(ndarray_npy::WriteNpyError::from),
    }
    .map_err(|e| npy_error(path, e))?;
    let file = w.into_inner().map_err(|e| npy_error(path, e.error()))?;
    file.sync_all().map_err(|e| npy_error(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_fields() {
        let dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }";
        assert_eq!(field(dict, "descr"), Some("'<f8'"));
        assert_eq!(field(dict, "fortran_order"), Some("False"));
        assert_eq!(field(dict, "shape"), Some("(3, 4)"));
        assert_eq!(field("{'shape': (), }", "shape"), Some("()"));
        assert_eq!(field("{'shape': (7,), }", "shape"), Some("(7,)"));
        assert_eq!(field("{}", "shape"), None);
    }

    #[test]
    fn shapes_are_tuples() {
        assert_eq!(parse_shape("()"), Ok(vec![]));
        assert_eq!(parse_shape("(7,)"), Ok(vec![7]));
        assert_eq!(parse_shape("(3, 4)"), Ok(vec![3, 4]));
        assert_eq!(parse_shape("(3, 4,)"), Ok(vec![3, 4]));
        assert_eq!(parse_shape("(3L, 4L)"), Ok(vec![3, 4]));
        for bad in [
            "(10)",
            "10",
            "(3,,4)",
            "(-1,)",
            "(3, x)",
            "(1e3,)",
            "(,)",
            "(99999999999999999999999,)",
        ] {
            assert!(parse_shape(bad).is_err(), "{bad}");
        }
    }
}

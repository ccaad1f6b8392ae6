//! Reading inputs from and writing results to NumPy's `.npy` files (through `ndarray-npy`).
//!
//! f64 and f32 arrays are read as they are; integer (i8 to i64, u8 to u64) and bool arrays are
//! converted to f64, as NumPy's `astype(float)` would. C and Fortran order both load. The header is
//! read first and checked against the file's length, so a header that promises more data than the
//! file holds is an error, not an attempt to allocate it.

use crate::array::Output;
use crate::error::{Error, Result};
use ndarray::ArrayD;
use ndarray_npy::{ReadNpyExt, ReadableElement, WriteNpyExt};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom};
use std::path::Path;

/// An array read from a `.npy` file.
#[derive(Debug, Clone)]
pub enum NpyArray {
    F64(ArrayD<f64>),
    F32(ArrayD<f32>),
}

fn npy_error(path: &Path, message: impl std::fmt::Display) -> Error {
    Error::Npy {
        path: path.display().to_string(),
        message: message.to_string(),
    }
}

/// What a `.npy` header says: the element type (without its byte-order mark) and the shape.
#[derive(Debug, Clone, PartialEq)]
struct Header {
    kind: String,
    shape: Vec<usize>,
    /// Bytes before the data.
    data_offset: u64,
}

/// The text of `key`'s value in a header dict: `'descr': '<f8'` gives `<f8`, `'shape': (3, 4)`
/// gives `3, 4`.
fn field<'h>(dict: &'h str, key: &str) -> Option<&'h str> {
    let rest = &dict[dict.find(&format!("'{key}'"))? + key.len() + 2..];
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let (open, close) = match rest.chars().next()? {
        '\'' => ('\'', '\''),
        '(' => ('(', ')'),
        _ => return None,
    };
    let body = &rest[open.len_utf8()..];
    Some(&body[..body.find(close)?])
}

fn read_header(path: &Path, file: &mut File) -> Result<Header> {
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
    let descr = field(&dict, "descr").ok_or_else(|| bad("no 'descr'"))?;
    let kind = descr.trim_start_matches(['<', '>', '|', '=']).to_string();
    let shape = field(&dict, "shape")
        .ok_or_else(|| bad("no 'shape'"))?
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| {
            d.trim_end_matches('L')
                .parse::<usize>()
                .map_err(|_| bad(&format!("dimension '{d}'")))
        })
        .collect::<Result<Vec<usize>>>()?;
    Ok(Header {
        kind,
        shape,
        data_offset: prefix + header_len,
    })
}

fn read_as<A: ReadableElement>(path: &Path, file: File) -> Result<ArrayD<A>> {
    ArrayD::<A>::read_npy(BufReader::new(file)).map_err(|e| npy_error(path, e))
}

fn widen<A: ReadableElement + Copy>(path: &Path, file: File, f: impl Fn(A) -> f64) -> Result<NpyArray> {
    Ok(NpyArray::F64(read_as::<A>(path, file)?.mapv(f)))
}

/// Reads a `.npy` file of any supported dtype.
pub fn read(path: &Path) -> Result<NpyArray> {
    let mut file = File::open(path).map_err(|e| npy_error(path, e))?;
    let header = read_header(path, &mut file)?;
    let itemsize: usize = match header.kind.as_str() {
        "f8" | "i8" | "u8" => 8,
        "f4" | "i4" | "u4" => 4,
        "i2" | "u2" => 2,
        "i1" | "u1" | "b1" => 1,
        other => {
            return Err(npy_error(
                path,
                format!("unsupported dtype '{other}': kiln reads float, integer and bool arrays"),
            ));
        }
    };
    let count = kiln_ir::shape::checked_size(&header.shape)?;
    let want = count
        .checked_mul(itemsize)
        .ok_or_else(|| npy_error(path, format!("shape {:?} overflows", header.shape)))?;
    let have = file
        .metadata()
        .map_err(|e| npy_error(path, e))?
        .len()
        .saturating_sub(header.data_offset);
    if (want as u64) > have {
        return Err(npy_error(
            path,
            format!(
                "the header promises {want} bytes of data for shape {:?} but the file holds {have}",
                header.shape
            ),
        ));
    }
    file.seek(SeekFrom::Start(0)).map_err(|e| npy_error(path, e))?;
    match header.kind.as_str() {
        "f8" => Ok(NpyArray::F64(read_as(path, file)?)),
        "f4" => Ok(NpyArray::F32(read_as(path, file)?)),
        "i8" => widen::<i64>(path, file, |v| v as f64),
        "i4" => widen::<i32>(path, file, |v| v as f64),
        "i2" => widen::<i16>(path, file, |v| v as f64),
        "i1" => widen::<i8>(path, file, |v| v as f64),
        "u8" => widen::<u64>(path, file, |v| v as f64),
        "u4" => widen::<u32>(path, file, |v| v as f64),
        "u2" => widen::<u16>(path, file, |v| v as f64),
        "u1" => widen::<u8>(path, file, |v| v as f64),
        _ => widen::<bool>(path, file, |v| if v { 1.0 } else { 0.0 }),
    }
}

/// Writes a result as a `.npy` file in its own dtype.
pub fn write(path: &Path, out: &Output) -> Result<()> {
    let file = File::create(path).map_err(|e| npy_error(path, e))?;
    let w = BufWriter::new(file);
    match out {
        Output::F64(a) => a.write_npy(w),
        Output::F32(a) => a.write_npy(w),
        Output::I64(a) => a.write_npy(w),
        Output::Bool(a) => a.write_npy(w),
    }
    .map_err(|e| npy_error(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_fields() {
        let dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }";
        assert_eq!(field(dict, "descr"), Some("<f8"));
        assert_eq!(field(dict, "shape"), Some("3, 4"));
        assert_eq!(field("{'shape': (), }", "shape"), Some(""));
        assert_eq!(field("{'shape': (7,), }", "shape"), Some("7,"));
        assert_eq!(field("{}", "shape"), None);
    }
}

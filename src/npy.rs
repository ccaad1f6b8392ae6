//! Reading inputs from and writing results to NumPy's `.npy` files (through `ndarray-npy`).
//!
//! f64 and f32 arrays are read as they are; integer (i8 to i64, u8 to u64) and bool arrays are
//! converted to f64, as NumPy's `astype(float)` would. C and Fortran order both load.

use crate::array::Output;
use crate::error::{Error, Result};
use ndarray::ArrayD;
use ndarray_npy::{ReadNpyError, ReadNpyExt, ReadableElement, WriteNpyExt};
use std::fs::File;
use std::io::BufWriter;
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

/// Tries to read `path` as an array of `A`; `Ok(None)` if the file holds another dtype.
fn try_read<A: ReadableElement>(path: &Path) -> Result<Option<ArrayD<A>>> {
    let file = File::open(path).map_err(|e| npy_error(path, e))?;
    match ArrayD::<A>::read_npy(std::io::BufReader::new(file)) {
        Ok(a) => Ok(Some(a)),
        Err(ReadNpyError::WrongDescriptor(_)) => Ok(None),
        Err(e) => Err(npy_error(path, e)),
    }
}

fn widen<A: ReadableElement + Copy>(path: &Path, f: impl Fn(A) -> f64) -> Result<Option<NpyArray>> {
    Ok(try_read::<A>(path)?.map(|a| NpyArray::F64(a.mapv(f))))
}

/// Reads a `.npy` file of any supported dtype.
pub fn read(path: &Path) -> Result<NpyArray> {
    if let Some(a) = try_read::<f64>(path)? {
        return Ok(NpyArray::F64(a));
    }
    if let Some(a) = try_read::<f32>(path)? {
        return Ok(NpyArray::F32(a));
    }
    let attempts: [fn(&Path) -> Result<Option<NpyArray>>; 9] = [
        |p| widen::<i64>(p, |v| v as f64),
        |p| widen::<i32>(p, |v| v as f64),
        |p| widen::<i16>(p, |v| v as f64),
        |p| widen::<i8>(p, |v| v as f64),
        |p| widen::<u64>(p, |v| v as f64),
        |p| widen::<u32>(p, |v| v as f64),
        |p| widen::<u16>(p, |v| v as f64),
        |p| widen::<u8>(p, |v| v as f64),
        |p| widen::<bool>(p, |v| if v { 1.0 } else { 0.0 }),
    ];
    for attempt in attempts {
        if let Some(a) = attempt(path)? {
            return Ok(a);
        }
    }
    Err(npy_error(
        path,
        "unsupported dtype: kiln reads float, integer and bool arrays",
    ))
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

//! Byte-string arrays at kiln's boundary (NumPy's `S<width>` dtype, [`kiln_ir::bytes`]): an input
//! ([`Strings`], inside [`crate::ArrayArg::Bytes`]) and a result ([`ByteStrings`], inside
//! [`crate::Output::Bytes`]).
//!
//! A byte-string array of shape `S` and width `w` is `w` bytes per string. An input keeps, beside
//! the caller's bytes, the view of each string's first byte ([`Strings::heads`]: shape `S`,
//! strides in bytes), so that every reshaping an input takes (broadcast axes, axis orders) is the
//! one the other types take; a string is read from its first byte's position on.

use crate::error::{Error, Result};
use crate::view::View;
use ndarray::{ArrayView, IxDyn, ShapeBuilder};

/// A byte-string input: `width` bytes per string, read at the positions of [`Strings::heads`].
#[derive(Debug, Clone)]
pub struct Strings<'a> {
    /// Each string's first byte (its shape is the array's; its strides, in bytes, step strings).
    pub heads: View<'a, u8>,
    /// The memory the strings lie in.
    pub memory: &'a [u8],
    /// The bytes of each string (at least 1).
    pub width: u32,
}

impl<'a> Strings<'a> {
    /// The strings of `memory` in C order, `width` bytes each, of shape `shape` (NumPy's `S` array
    /// of that dtype and shape, C-contiguous).
    ///
    /// # Errors
    /// A width of 0, or `memory` not holding exactly the shape's strings.
    pub fn new(memory: &'a [u8], width: usize, shape: &[usize]) -> Result<Strings<'a>> {
        let w = u32::try_from(width)
            .ok()
            .filter(|&w| w > 0)
            .ok_or_else(|| Error::Output(format!("a byte-string width of {width} (1 to 2^32 - 1)")))?;
        let n: usize = shape.iter().product();
        if n.checked_mul(width) != Some(memory.len()) {
            return Err(Error::Output(format!(
                "{} bytes for {n} strings of {width} bytes (shape {shape:?})",
                memory.len()
            )));
        }
        // (an empty array's strides stay 0: it reads no string, and ndarray refuses strides that
        // would address past an empty memory)
        let mut strides = vec![0usize; shape.len()];
        let mut step = width;
        for (s, &d) in strides.iter_mut().zip(shape).rev().filter(|_| n > 0) {
            *s = step;
            step *= d.max(1);
        }
        // the heads of the last string's bytes are in the memory: a view of the first bytes
        let heads = ArrayView::from_shape(IxDyn(shape).strides(IxDyn(&strides)), memory)
            .map_err(|e| Error::Output(format!("byte strings of shape {shape:?}: {e}")))?;
        Ok(Strings {
            heads: View::from(heads),
            memory,
            width: w,
        })
    }

    /// The array's shape.
    pub fn shape(&self) -> &[usize] {
        self.heads.shape()
    }

    /// The strides of the heads, in bytes.
    pub fn strides(&self) -> &[isize] {
        self.heads.strides()
    }

    /// The position in `memory` of the string at `idx`; None outside the memory.
    fn position(&self, idx: &[usize]) -> Option<usize> {
        let view = self.heads.to_dyn();
        // the heads view points into `memory`: its first element's distance from the start
        let base = (view.as_ptr() as usize).checked_sub(self.memory.as_ptr() as usize)? as isize;
        let at = idx
            .iter()
            .zip(view.strides())
            .fold(base, |a, (&i, &s)| a + i as isize * s);
        let at = usize::try_from(at).ok()?;
        (at + self.width as usize <= self.memory.len()).then_some(at)
    }

    /// The caller's memory, where it holds the strings in C order, one after another, from its
    /// start (no copy, no allocation).
    pub fn in_c_order(&self) -> Option<&'a [u8]> {
        let shape = self.shape();
        let n: usize = shape.iter().product();
        let w = self.width as usize;
        let whole = n == 0 || std::ptr::eq(self.heads.as_ptr(), self.memory.as_ptr());
        let mut expect = w as isize;
        let standard = shape.iter().zip(self.strides()).rev().all(|(&d, &s)| {
            let ok = d == 1 || s == expect;
            expect = expect.wrapping_mul(d as isize);
            ok
        });
        (whole && standard && self.memory.len() == n * w).then_some(self.memory)
    }

    /// The strings in C order, one after another: the caller's memory where it is that already,
    /// else a copy.
    ///
    /// # Errors
    /// The copy's allocation, or a view whose strings lie outside its memory.
    pub fn c_order(&self) -> Result<std::borrow::Cow<'a, [u8]>> {
        if let Some(memory) = self.in_c_order() {
            return Ok(std::borrow::Cow::Borrowed(memory));
        }
        let shape = self.shape().to_vec();
        let n: usize = shape.iter().product();
        let w = self.width as usize;
        let mut out = Vec::new();
        out.try_reserve_exact(n * w)
            .map_err(|_| kiln_ir::IrError::Allocation {
                what: "a C-order copy of byte strings".into(),
                elements: n,
            })?;
        let mut idx = vec![0usize; shape.len()];
        for flat in 0..n {
            kiln_ir::shape::unravel(flat, &shape, &mut idx);
            let at = self
                .position(&idx)
                .ok_or_else(|| Error::Output("a byte string outside its array's memory".into()))?;
            out.extend_from_slice(&self.memory[at..at + w]);
        }
        Ok(std::borrow::Cow::Owned(out))
    }
}

/// A byte-string result (NumPy's `S<width>`): the strings in C order, each `width` bytes,
/// NUL-padded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ByteStrings {
    /// The result's shape.
    pub shape: Vec<usize>,
    /// The bytes of each string (at least 1).
    pub width: usize,
    /// The strings, one after another, in C order.
    pub data: Vec<u8>,
}

impl ByteStrings {
    /// The result as an input of a later run.
    pub fn arg(&self) -> crate::ArrayArg<'_> {
        match Strings::new(&self.data, self.width, &self.shape) {
            Ok(s) => crate::ArrayArg::Bytes(s),
            Err(_) => unreachable!("a result holds its shape's strings"),
        }
    }

    /// The string at flat position `i` (C order), trailing NULs included.
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        self.data.get(i * self.width..(i + 1) * self.width)
    }

    /// Each string read as a number, as NumPy's `astype(float64)` reads it (ASCII, surrounding
    /// whitespace and trailing NULs ignored); NaN where it is not one (NumPy raises there).
    pub fn numbers(&self) -> ndarray::ArrayD<f64> {
        let n = self.data.len() / self.width.max(1);
        let values = (0..n)
            .map(|i| {
                let s = self.get(i).unwrap_or(&[]);
                let end = s.iter().rposition(|&c| c != 0).map_or(0, |e| e + 1);
                std::str::from_utf8(&s[..end])
                    .ok()
                    .and_then(|t| t.trim().parse::<f64>().ok())
                    .unwrap_or(f64::NAN)
            })
            .collect();
        ndarray::ArrayD::from_shape_vec(IxDyn(&self.shape), values)
            .unwrap_or_else(|_| ndarray::ArrayD::from_elem(IxDyn(&self.shape), f64::NAN))
    }

    /// The same strings in another shape of as many.
    ///
    /// # Errors
    /// A shape of another size.
    pub fn into_shape(self, shape: Vec<usize>) -> Result<ByteStrings> {
        if shape.iter().product::<usize>() * self.width != self.data.len() {
            return Err(Error::Output(format!(
                "byte strings of shape {:?} as shape {shape:?}",
                self.shape
            )));
        }
        Ok(ByteStrings { shape, ..self })
    }

    /// The strings with their axes permuted (axis `k` of the result is axis `order[k]`), in C order.
    pub fn permuted(&self, order: &[usize]) -> ByteStrings {
        let shape: Vec<usize> = order.iter().map(|&a| self.shape[a]).collect();
        let n: usize = shape.iter().product();
        let src = kiln_ir::shape::c_strides(&self.shape);
        let mut data = Vec::with_capacity(self.data.len());
        let mut idx = vec![0usize; shape.len()];
        for flat in 0..n {
            kiln_ir::shape::unravel(flat, &shape, &mut idx);
            let at: usize = idx.iter().zip(order).map(|(&i, &a)| i * src[a] as usize).sum();
            data.extend_from_slice(&self.data[at * self.width..(at + 1) * self.width]);
        }
        ByteStrings {
            shape,
            width: self.width,
            data,
        }
    }
}

//! The text language (in progress).

//! Typed errors of decoding and encoding.

/// Why a word could not be decoded or an instruction not encoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// No form of the table matches the word.
    #[error("unknown encoding {bits:#018x} at offset {offset:#x}")]
    UnknownEncoding {
        /// Byte offset of the word in its code stream (0 when decoded alone).
        offset: u64,
        /// The word (zero-extended: 64-bit Maxwell words use the low half).
        bits: u128,
    },
    /// A field value does not fit the form's field.
    #[error("value {value} does not fit field {field:?} of form {form}")]
    FieldRange {
        /// The form's name.
        form: &'static str,
        /// The field.
        field: crate::Field,
        /// The value given.
        value: i64,
    },
    /// The form has no such field.
    #[error("form {form} has no field {field:?}")]
    NoField {
        /// The form's name.
        form: &'static str,
        /// The field.
        field: crate::Field,
    },
    /// No form with that name.
    #[error("no form named {0}")]
    NoForm(String),
}

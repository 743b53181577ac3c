//! Per-value tables that a thread keeps from one pass to the next.
//!
//! A pass over a function indexes its tables by value, so each is as long as the whole
//! instruction arena (dropped instructions included), while a walk writes few of its
//! entries. Allocating and filling such a table for every pass of every function cost more
//! than the walks' writes; a table taken from here is already empty, and giving it back
//! empties only the entries that were written.

use crate::ir::Value;
use std::cell::Cell;

thread_local! {
    /// The alias table of this thread's last pass, for the next ([`Aliases::take`]).
    static SPARE: Cell<Option<Aliases>> = const { Cell::new(None) };
}

/// An alias table by value index (`Value::NONE`: the value stands for itself), with the
/// entries set so far. Reads go through the slice it dereferences to; writes go through
/// [`Aliases::set`], or through the slice followed by [`Aliases::noted`].
#[derive(Default)]
pub(crate) struct Aliases {
    /// The aliases; all `Value::NONE` but the entries of `set`.
    map: Vec<Value>,
    /// The indices of the entries that may be set.
    set: Vec<u32>,
}

impl Aliases {
    /// An empty table for the `n` values of a function: this thread's last one, made long
    /// enough.
    pub(crate) fn take(n: usize) -> Aliases {
        let mut a = SPARE.take().unwrap_or_default();
        a.grow(n);
        a
    }

    /// Makes the table cover the `n` values of a function that grew.
    #[inline]
    pub(crate) fn grow(&mut self, n: usize) {
        if self.map.len() < n {
            self.map.resize(n, Value::NONE);
        }
    }

    /// Makes `v` an alias of `x`.
    #[inline]
    pub(crate) fn set(&mut self, v: Value, x: Value) {
        self.map[v.index()] = x;
        self.set.push(v.0);
    }

    /// Notes that the entry of `v` may have been set through the slice.
    #[inline]
    pub(crate) fn noted(&mut self, v: Value) {
        self.set.push(v.0);
    }

    /// The table as a mutable slice (writes must be [`Aliases::noted`]).
    pub(crate) fn as_mut_slice(&mut self) -> &mut [Value] {
        &mut self.map
    }

    /// Empties the entries that were set and hands the table on to this thread's next pass.
    pub(crate) fn give_back(mut self) {
        for &v in &self.set {
            self.map[v as usize] = Value::NONE;
        }
        self.set.clear();
        SPARE.set(Some(self));
    }
}

impl std::ops::Deref for Aliases {
    type Target = [Value];
    fn deref(&self) -> &[Value] {
        &self.map
    }
}

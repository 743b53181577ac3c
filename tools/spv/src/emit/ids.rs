//! A map from SPIR-V ids to ids, stored densely: ids are small consecutive integers
//! (`Builder::id` counts up from 1), so a vector indexed by id replaces a hash map for the
//! emitter's per-instruction bookkeeping (each emitted instruction's result type, each bit
//! cast's source), with no hashing and no rehashing as the module grows.

use rspirv::spirv::Word;

/// Id → id, 0 meaning absent (no SPIR-V id is 0).
#[derive(Default)]
pub(crate) struct IdMap(Vec<Word>);

impl IdMap {
    /// An empty map with room for ids below `n` before it grows, in `v`'s memory (a map an
    /// earlier module left, or a new vector).
    pub(crate) fn reuse(mut v: Vec<Word>, n: usize) -> IdMap {
        v.clear();
        v.resize(n, 0);
        IdMap(v)
    }

    /// The map's memory, for [`IdMap::reuse`]; the map is left empty.
    pub(crate) fn take_memory(&mut self) -> Vec<Word> {
        std::mem::take(&mut self.0)
    }

    /// The value of `id`, if set.
    #[inline]
    pub(crate) fn get(&self, id: Word) -> Option<Word> {
        match self.0.get(id as usize) {
            Some(&w) if w != 0 => Some(w),
            _ => None,
        }
    }

    /// Sets the value of `id` to `w` (not 0), replacing any earlier one.
    #[inline]
    pub(crate) fn insert(&mut self, id: Word, w: Word) {
        let i = id as usize;
        if i >= self.0.len() {
            let n = (i + 1).max(2 * self.0.len()).max(64);
            self.0.resize(n, 0);
        }
        self.0[i] = w;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_replace() {
        let mut m = IdMap::default();
        assert_eq!(m.get(5), None);
        m.insert(5, 7);
        m.insert(1000, 3);
        assert_eq!((m.get(5), m.get(1000), m.get(6)), (Some(7), Some(3), None));
        m.insert(5, 9);
        assert_eq!(m.get(5), Some(9));
    }
}

//! The emitter's cache of the types it derives (pointers, vectors, arrays, structs) by a key
//! of a few small integers: a hash map behind a small direct-mapped memo. The same few types
//! are asked for again and again (a `u32` pointer per memory access), and comparing a key in
//! the memo costs less than hashing it.

use rspirv::spirv::Word;
use std::collections::HashMap;

/// A type's key: a kind, then its operands.
pub(crate) type Key = (u8, u32, u32);

/// The memo's slots (a power of two).
const SLOTS: usize = 16;

/// Types by key (see the module docs).
pub(crate) struct TypeCache {
    map: HashMap<Key, Word, super::Fast>,
    /// Recently found types (id 0: an empty slot).
    memo: [(Key, Word); SLOTS],
}

impl Default for TypeCache {
    fn default() -> Self {
        TypeCache {
            map: HashMap::with_capacity_and_hasher(64, Default::default()),
            memo: [((0, 0, 0), 0); SLOTS],
        }
    }
}

/// The memo slot of `k`.
#[inline]
fn slot(k: &Key) -> usize {
    (k.1 ^ k.2.rotate_left(3) ^ (k.0 as u32).wrapping_mul(0x9e37_79b9) >> 27) as usize % SLOTS
}

impl TypeCache {
    /// The type of key `k`, if made.
    #[inline]
    pub(crate) fn get(&mut self, k: &Key) -> Option<Word> {
        match self.memo[slot(k)] {
            (mk, w) if mk == *k && w != 0 => Some(w),
            _ => self.get_from_map(k),
        }
    }

    /// [`TypeCache::get`] past the memo.
    #[inline(never)]
    fn get_from_map(&mut self, k: &Key) -> Option<Word> {
        let w = *self.map.get(k)?;
        self.memo[slot(k)] = (*k, w);
        Some(w)
    }

    /// Records type `w` of key `k`.
    pub(crate) fn insert(&mut self, k: Key, w: Word) {
        self.map.insert(k, w);
        self.memo[slot(&k)] = (k, w);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_was_inserted_past_collisions() {
        let mut c = TypeCache::default();
        let keys: Vec<Key> = (0..100).map(|i| ((i % 5) as u8, i * 7, i % 3)).collect();
        for (i, &k) in keys.iter().enumerate() {
            assert_eq!(c.get(&k), None);
            c.insert(k, i as Word + 1);
        }
        for (i, &k) in keys.iter().enumerate().rev() {
            assert_eq!(c.get(&k), Some(i as Word + 1));
            assert_eq!(c.get(&k), Some(i as Word + 1));
        }
        assert_eq!(c.get(&(9, 9, 9)), None);
    }
}

//! The `shader_separable` cover rule (seed 000, 13 Sentinels): pair every vertex shader with
//! the fewest pixel shaders whose inputs together are every input any pixel shader reads.

/// Picks the cover greedily (largest new coverage first, ties to the smaller key) from
/// `(key, input component mask)` of every pixel shader. Returns the chosen keys, sorted.
pub fn cover(fragments: &[(String, u128)]) -> Vec<String> {
    let all = fragments.iter().fold(0u128, |a, f| a | f.1);
    let mut sorted: Vec<&(String, u128)> = fragments.iter().collect();
    sorted.sort();
    let mut covered = 0u128;
    let mut chosen = Vec::new();
    while covered != all {
        let best = sorted
            .iter()
            .map(|f| ((f.1 & !covered).count_ones(), f))
            .fold(None::<(u32, &&(String, u128))>, |b, c| match b {
                Some(b) if b.0 >= c.0 => Some(b),
                _ => Some(c),
            });
        match best {
            Some((gain, f)) if gain > 0 => {
                covered |= f.1;
                chosen.push(f.0.clone());
            }
            _ => break,
        }
    }
    chosen.sort();
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cover` of (name, mask) shaders.
    fn cover_of(f: &[(&str, u128)]) -> Vec<String> {
        let f: Vec<(String, u128)> = f.iter().map(|&(n, m)| (n.to_string(), m)).collect();
        cover(&f)
    }

    #[test]
    fn one_shader_covers_all() {
        assert_eq!(
            cover_of(&[("b", 0b0111), ("a", 0b1111), ("c", 0b0001)]),
            ["a"]
        );
    }

    #[test]
    fn two_needed() {
        assert_eq!(
            cover_of(&[("x", 0b0011), ("y", 0b1100), ("z", 0b0100)]),
            ["x", "y"]
        );
    }

    #[test]
    fn nothing_read() {
        assert!(cover_of(&[("x", 0)]).is_empty());
    }
}

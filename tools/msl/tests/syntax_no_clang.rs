//! Without a clang, `dmsh_msl::syntax::check` says so with `SyntaxError::ClangNotFound`, the
//! error the other tests turn into a skip (its own test binary: it sets `DMSH_CLANG`).

use dmsh_msl::syntax::{check, SyntaxError, CLANG_ENV};

#[test]
fn a_missing_clang_is_clang_not_found() {
    std::env::set_var(CLANG_ENV, "/nonexistent/clang++-19");
    match check("kernel void main0() {}") {
        Err(SyntaxError::ClangNotFound(why)) => {
            println!("{why}");
            assert!(why.contains("/nonexistent/clang++-19"), "{why}");
        }
        r => panic!("expected ClangNotFound, got {r:?}"),
    }
}
